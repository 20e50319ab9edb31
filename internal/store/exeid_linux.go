package store

import (
	"strconv"
	"syscall"
)

// executableID names the running executable by device, inode, size,
// modification and change time ("dev:ino:size:mtime:ctime", nanoseconds).
// One stat of /proc/self/exe, which names the file this process runs even
// if it was renamed or replaced since: os.Executable's readlink and an
// os.Stat through FileInfo (and fmt) cost a short command about as much as
// the rest of reading its config.
func executableID() ([]byte, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return nil, false
	}
	id := make([]byte, 0, 96)
	for i, n := range [...]int64{int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()} {
		if i > 0 {
			id = append(id, ':')
		}
		id = strconv.AppendInt(id, n, 10)
	}
	return id, true
}
