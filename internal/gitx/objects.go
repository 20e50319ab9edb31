package gitx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// The few commit and tree encodings gitx needs, on go-git's object storage.
// go-git's plumbing/object package (and the top-level go-git package, which
// imports it with every transport) would do the same, but they link an
// OpenPGP implementation and the SSH and HTTP transports whose package
// initialisation (elliptic curves parsed with math/big, URL regexps, SSH
// tables) every pm process paid at start-up; Go has no lazy package init,
// so gitx does not import them. The formats are git's
// (Documentation/gitformat-*).

// treeEntry is one entry of a stored tree.
type treeEntry struct {
	Name string
	Mode filemode.FileMode
	Hash plumbing.Hash
}

var errMalformedTree = errors.New("malformed tree")

// readTree decodes the tree h: "MODE SP NAME NUL HASH" entries.
func readTree(s storer.EncodedObjectStorer, h plumbing.Hash) (_ []treeEntry, err error) {
	rd, err := openObject(s, plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	defer closeInto(rd, &err)
	r := bufio.NewReader(rd)
	var out []treeEntry
	for {
		modeText, err := r.ReadString(' ')
		if errors.Is(err, io.EOF) && modeText == "" {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: missing mode terminator", errMalformedTree)
		}
		mode, err := filemode.New(strings.TrimSuffix(modeText, " "))
		if err != nil {
			return nil, fmt.Errorf("%w: malformed mode", errMalformedTree)
		}
		name, err := r.ReadString(0)
		if err != nil || len(name) == 1 {
			return nil, fmt.Errorf("%w: missing or empty file name", errMalformedTree)
		}
		e := treeEntry{Name: name[:len(name)-1], Mode: canonicalMode(mode)}
		if _, err := io.ReadFull(r, e.Hash[:]); err != nil {
			return nil, fmt.Errorf("%w: truncated object id", errMalformedTree)
		}
		out = append(out, e)
	}
}

func openObject(s storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash) (io.ReadCloser, error) {
	o, err := s.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	return o.Reader()
}

func closeInto(c io.Closer, err *error) {
	if cerr := c.Close(); *err == nil {
		*err = cerr
	}
}

// canonicalMode maps the odd modes old tools wrote to the ones git uses
// (as go-git's tree decoder does).
func canonicalMode(mode filemode.FileMode) filemode.FileMode {
	switch mode & 0o170000 {
	case 0o040000:
		return filemode.Dir
	case 0o100000:
		if mode&0o111 != 0 {
			return filemode.Executable
		}
		return filemode.Regular
	case 0o120000:
		return filemode.Symlink
	}
	return filemode.Submodule
}

var errEntryNotFound = errors.New("entry not found")

// findEntry finds the entry at the slash-separated path p under tree root.
func findEntry(s storer.EncodedObjectStorer, root plumbing.Hash, p string) (*treeEntry, error) {
	tree := root
	parts := strings.Split(p, "/")
	for i, part := range parts {
		entries, err := readTree(s, tree)
		if err != nil {
			return nil, err
		}
		var found *treeEntry
		for j := range entries {
			if entries[j].Name == part {
				found = &entries[j]
				break
			}
		}
		switch {
		case found == nil:
			return nil, errEntryNotFound
		case i == len(parts)-1:
			return found, nil
		case found.Mode != filemode.Dir:
			return nil, errEntryNotFound
		}
		tree = found.Hash
	}
	return nil, errEntryNotFound
}

// walkFiles calls fn with every non-directory entry under tree h, its path
// prefixed by prefix, depth first in tree order.
func walkFiles(s storer.EncodedObjectStorer, h plumbing.Hash, prefix string, fn func(name string, e treeEntry)) error {
	entries, err := readTree(s, h)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Mode == filemode.Dir {
			if err := walkFiles(s, e.Hash, prefix+e.Name+"/", fn); err != nil {
				return err
			}
			continue
		}
		fn(prefix+e.Name, e)
	}
	return nil
}

// commitHeader is what gitx reads of a commit: its tree, parents, message
// and committer time (Unix seconds; 0 when the line cannot be read).
type commitHeader struct {
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	Message string
	Time    int64
}

// readCommit decodes the commit h's tree and parent lines and its message.
func readCommit(s storer.EncodedObjectStorer, h plumbing.Hash) (_ commitHeader, err error) {
	rd, err := openObject(s, plumbing.CommitObject, h)
	if err != nil {
		return commitHeader{}, err
	}
	defer closeInto(rd, &err)
	data, err := io.ReadAll(rd)
	if err != nil {
		return commitHeader{}, err
	}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c := commitHeader{Message: string(msg)}
	for _, line := range strings.Split(string(head), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch {
		case key == "tree" && plumbing.IsHash(val):
			c.Tree = plumbing.NewHash(val)
		case key == "parent" && plumbing.IsHash(val):
			c.Parents = append(c.Parents, plumbing.NewHash(val))
		case key == "committer":
			c.Time = signatureTime(val)
		}
	}
	if c.Tree.IsZero() {
		return commitHeader{}, fmt.Errorf("commit %s has no tree line", h)
	}
	return c, nil
}

// signatureTime is the Unix seconds of a signature line's value ("NAME
// <EMAIL> SECONDS +HHMM"), 0 when it holds none.
func signatureTime(val string) int64 {
	i := strings.LastIndexByte(val, '>')
	if i < 0 {
		return 0
	}
	f := strings.Fields(val[i+1:])
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// signature is an author or committer line's value.
type signature struct {
	Name, Email string
	When        time.Time
}

// String is git's encoding: "NAME <EMAIL> UNIX-SECONDS +HHMM".
func (s signature) String() string {
	return fmt.Sprintf("%s <%s> %d %s", s.Name, s.Email, max(s.When.Unix(), 0), s.When.Format("-0700"))
}

// writeCommit stores a commit of tree with parents and returns its hash.
func writeCommit(s storer.EncodedObjectStorer, tree plumbing.Hash, parents []plumbing.Hash, author, committer signature, msg string) (plumbing.Hash, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", author, committer, msg)
	o := s.NewEncodedObject()
	o.SetType(plumbing.CommitObject)
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}
