package secretstore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/atomicfile"
	"github.com/switchboard-mcp/switchboard/internal/filelock"
	"github.com/switchboard-mcp/switchboard/internal/fileowner"
)

// The encrypted file: store.enc holds {"version":1,"nonce":…,"sealed":…},
// sealed being the JSON of every namespace's values sealed with
// AES-256-GCM under the 32-byte key in store.key (base64), with the file's
// format as additional data. Each write seals afresh with a new nonce.

const (
	fileVersion = 1
	fileAAD     = "switchboard-secrets-v1"
	indexFile   = "index.json"
)

func (sh *shared) storeFile() string { return filepath.Join(sh.dir, "store.enc") }
func (sh *shared) keyFile() string   { return filepath.Join(sh.dir, "store.key") }
func (sh *shared) indexFile() string { return filepath.Join(sh.dir, indexFile) }

// values are the encrypted file's contents: namespace → name → value.
type values map[string]map[string]string

func (v values) set(ns, name, value string) {
	if v[ns] == nil {
		v[ns] = map[string]string{}
	}
	v[ns][name] = value
}

func (v values) del(ns, name string) bool {
	_, ok := v[ns][name]
	delete(v[ns], name)
	if len(v[ns]) == 0 {
		delete(v, ns)
	}
	return ok
}

type sealedFile struct {
	Version int    `json:"version"`
	Nonce   string `json:"nonce"`
	Sealed  string `json:"sealed"`
}

// fileGet reads one value from the encrypted file.
func (sh *shared) fileGet(ns, name string) (string, error) {
	vals, err := sh.readValues()
	if err != nil {
		return "", err
	}
	v, ok := vals[ns][name]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

// fileEdit changes the encrypted file under its lock. A file (or key)
// that cannot be read is an error, and nothing is written over it.
func (sh *shared) fileEdit(change func(values)) error {
	unlock, err := sh.lock(sh.storeFile())
	if err != nil {
		return err
	}
	defer unlock()
	vals, err := sh.readValues()
	if err != nil {
		return err
	}
	change(vals)
	key, err := sh.readKey(true)
	if err != nil {
		return err
	}
	return sh.writeValues(key, vals)
}

// readValues reads and opens the encrypted file; no file is no values.
func (sh *shared) readValues() (values, error) {
	file := sh.storeFile()
	data, err := readPrivate(file, "its values are encrypted: exposed only to someone who read "+filepath.Base(sh.keyFile())+" too")
	if errors.Is(err, fs.ErrNotExist) {
		return values{}, nil
	}
	if err != nil {
		return nil, err
	}
	key, err := sh.readKey(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s exists but its key %s does not, so its secrets cannot be read; restore the key, or remove %s and set the secrets again", file, sh.keyFile(), file)
	}
	if err != nil {
		return nil, err
	}
	var sf sealedFile
	if err := json.Unmarshal(data, &sf); err != nil || sf.Version != fileVersion {
		return nil, fmt.Errorf("%s is not a secret store Switchboard can read (damaged, or of another version); it was left as it is: fix or remove it", file)
	}
	nonce, err1 := base64.StdEncoding.DecodeString(sf.Nonce)
	sealed, err2 := base64.StdEncoding.DecodeString(sf.Sealed)
	aead, err3 := newAEAD(key)
	if err1 != nil || err2 != nil || err3 != nil || len(nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("%s is damaged; it was left as it is: fix or remove it", file)
	}
	plain, err := aead.Open(nil, nonce, sealed, []byte(fileAAD))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be opened with the key %s (damaged, or the key is not its own); it was left as it is", file, sh.keyFile())
	}
	vals := values{}
	if err := json.Unmarshal(plain, &vals); err != nil {
		return nil, fmt.Errorf("%s is damaged; it was left as it is: fix or remove it", file)
	}
	return vals, nil
}

func (sh *shared) writeValues(key []byte, vals values) error {
	plain, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	sealed := aead.Seal(nil, nonce, plain, []byte(fileAAD))
	data, _ := json.Marshal(sealedFile{Version: fileVersion, Nonce: base64.StdEncoding.EncodeToString(nonce), Sealed: base64.StdEncoding.EncodeToString(sealed)})
	return atomicfile.WriteFile(sh.storeFile(), append(data, '\n'), 0o600)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// readKey reads the key; with create, a missing one is made (32 random
// bytes, 0600).
func (sh *shared) readKey(create bool) ([]byte, error) {
	file := sh.keyFile()
	data, err := readPrivate(file, "whoever read it can decrypt the store: treat its secrets as exposed and change them")
	if errors.Is(err, fs.ErrNotExist) && create {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(file, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(string(trimNewline(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s is not a key Switchboard wrote (32 bytes, base64); it was left as it is", file)
	}
	return key, nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// readPrivate reads a file of the store, refusing one others may read or
// write, or that belongs to someone else: its secrets may have been
// copied, or be theirs. exposed says what a reader of it may have
// learned, for the refusal.
func readPrivate(file, exposed string) ([]byte, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; remove it", file)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s has mode %04o, so others may read it (it must be 0600: chmod 600 %s; %s)", file, fi.Mode().Perm(), file, exposed)
	}
	if who := fileowner.Other(fi); who != "" {
		return nil, fmt.Errorf("%s belongs to %s, so its contents may be theirs; remove it", file, who)
	}
	return os.ReadFile(file)
}

// lock makes the store's folder and takes the lock of its file path, for
// a read-modify-write that another process may be doing too.
func (sh *shared) lock(path string) (unlock func(), err error) {
	if err := sh.mkdir(); err != nil {
		return nil, err
	}
	return filelock.Lock(path, filelock.DefaultTimeout)
}

// mkdir makes the store's folder 0700.
func (sh *shared) mkdir() error {
	if err := os.MkdirAll(sh.dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(sh.dir)
	if err != nil {
		return err
	}
	if who := fileowner.Other(fi); who != "" {
		return fmt.Errorf("%s belongs to %s, so it cannot hold your secrets; remove it", sh.dir, who)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(sh.dir, 0o700)
	}
	return nil
}

// The index: names, where each is kept and when it was set. Never values.

type entry struct {
	Store   string `json:"store"`
	Updated string `json:"updated"`
}

type index struct {
	Version    int                         `json:"version"`
	Namespaces map[string]map[string]entry `json:"namespaces"`
}

func (idx *index) entry(ns, name string) (entry, bool) {
	e, ok := idx.Namespaces[ns][name]
	return e, ok
}

func (idx *index) set(ns, name string, e entry) {
	if idx.Namespaces == nil {
		idx.Namespaces = map[string]map[string]entry{}
	}
	if idx.Namespaces[ns] == nil {
		idx.Namespaces[ns] = map[string]entry{}
	}
	idx.Namespaces[ns][name] = e
}

func (idx *index) del(ns, name string) bool {
	_, ok := idx.Namespaces[ns][name]
	delete(idx.Namespaces[ns], name)
	if len(idx.Namespaces[ns]) == 0 {
		delete(idx.Namespaces, ns)
	}
	return ok
}

func (idx *index) list(ns string) []Entry {
	var out []Entry
	for name, e := range idx.Namespaces[ns] {
		t, _ := time.Parse(time.RFC3339, e.Updated)
		out = append(out, Entry{Name: name, Kind: e.Store, Updated: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// readIndex reads the index; no file is an empty index.
func (sh *shared) readIndex() (*index, error) {
	data, err := readPrivate(sh.indexFile(), "it holds your secrets' names and where they are used, not their values")
	if errors.Is(err, fs.ErrNotExist) {
		return &index{Version: 1}, nil
	}
	if err != nil {
		return nil, err
	}
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil || idx.Version != 1 {
		return nil, fmt.Errorf("%s is not an index of secrets Switchboard can read (damaged, or of another version); it was left as it is: fix or remove it (it holds names only)", sh.indexFile())
	}
	return &idx, nil
}

// editIndex changes the index under its lock; fn's error leaves it as it
// was.
func (sh *shared) editIndex(fn func(*index) error) error {
	unlock, err := sh.lock(sh.indexFile())
	if err != nil {
		return err
	}
	defer unlock()
	idx, err := sh.readIndex()
	if err != nil {
		return err
	}
	if err := fn(idx); err != nil {
		return err
	}
	idx.Version = 1
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(sh.indexFile(), append(data, '\n'), 0o600)
}
