package store

import (
	"os"
	"syscall"
	"unsafe"
)

// countTaskIDs counts the entries of dir named like a task id. It reads the
// directory with getdents into one fixed buffer and looks at the names in
// place, allocating nothing per entry: pm status counts tens of thousands of
// finished-task markers in constant memory. A missing dir counts 0.
func countTaskIDs(dir string) (int, error) {
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf [32 << 10]byte
	n := 0
	for {
		got, err := syscall.ReadDirent(int(f.Fd()), buf[:])
		if err != nil {
			return 0, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if got <= 0 {
			return n, nil
		}
		n += countNames(buf[:got])
	}
}

// countNames walks linux/BSD dirent records: the record length, then the
// NUL-terminated name at the platform's offset.
func countNames(b []byte) int {
	var d syscall.Dirent
	nameOff := int(unsafe.Offsetof(d.Name))
	recOff := int(unsafe.Offsetof(d.Reclen))
	n := 0
	for len(b) > nameOff {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[recOff])))
		if reclen == 0 || reclen > len(b) {
			break
		}
		name := b[nameOff:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if isTaskIDBytes(name) {
			n++
		}
		b = b[reclen:]
	}
	return n
}
