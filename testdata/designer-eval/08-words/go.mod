module evalprog

go 1.22
