package replay

import (
	"bytes"
	_ "embed"
)

//go:embed landing.json
var landing []byte

// Landing is the recorded landing-page flow pm demo plays.
func Landing() (*Script, error) { return Load(bytes.NewReader(landing)) }
