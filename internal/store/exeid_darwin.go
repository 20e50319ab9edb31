package store

import (
	"os"
	"strconv"
	"syscall"
)

// executableID names the running executable by device, inode, size,
// modification and change time ("dev:ino:size:mtime:ctime", nanoseconds),
// as on Linux; macOS has no /proc/self/exe, so the path comes from
// os.Executable.
func executableID() ([]byte, bool) {
	exe, err := os.Executable()
	if err != nil {
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Stat(exe, &st); err != nil {
		return nil, false
	}
	id := make([]byte, 0, 96)
	for i, n := range [...]int64{int64(st.Dev), int64(st.Ino), st.Size, syscall.TimespecToNsec(st.Mtimespec), syscall.TimespecToNsec(st.Ctimespec)} {
		if i > 0 {
			id = append(id, ':')
		}
		id = strconv.AppendInt(id, n, 10)
	}
	return id, true
}
