package driver

import (
	"bytes"
	"os"
	"strconv"
)

// Marked lists the processes (but this one) that belong to a run of the
// state directory home: RunEnv in their environment and PM_HOME=home (what
// a host and everything it starts inherit). It maps each pid to its run
// token, for pm doctor to compare with the runs on record. Processes whose
// environment this user cannot read are not ours and are skipped.
func Marked(home string) map[int]string {
	out := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	runKey, homeEntry := []byte(RunEnv+"="), []byte("PM_HOME="+home)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		run, ours := "", false
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			switch {
			case bytes.HasPrefix(kv, runKey):
				run = string(kv[len(runKey):])
			case bytes.Equal(kv, homeEntry):
				ours = true
			}
		}
		if run != "" && ours {
			out[pid] = run
		}
	}
	return out
}
