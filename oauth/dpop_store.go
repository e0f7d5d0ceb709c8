package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"

	"github.com/switchboard-mcp/switchboard/internal/fileowner"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// The DPoP key store. A DPoP-bound access token and its refresh token are
// only usable with the private key they were bound to (RFC 9449 §5), so a
// token file that holds them is useless without that key: the key is kept
// next to it, one file per server, written and read with the same care as
// the tokens. The token file names the key it needs by its RFC 7638
// thumbprint (dpop_jkt), so a key file that was swapped, edited or left
// over from another login is noticed before any request is signed with it.
//
// A key file that cannot be trusted (readable by others, not a regular
// file, not a key, or not the key the tokens are bound to) is an error the
// user sees: the Client never makes a new key and carries on with tokens
// bound to the old one, and never sends a bound token without its proof.

// DPoPKeyFile is where the DPoP private key of a server's tokens is kept
// under dir (mode 0600, directory 0700). It sits next to TokenFile and is
// removed with it by Logout. Its name never ends in ".json", so it cannot
// be another server's token file.
func DPoPKeyFile(dir, server string) string {
	return filepath.Join(dir, url.PathEscape(server)+".dpop.key")
}

// maxKeyFile bounds what is read of a key file: a real one is ~250 bytes.
const maxKeyFile = 64 << 10

// keyFile is the stored form: the private key as a JWK (RFC 7517), EC
// P-256, the one kind of key the Client makes for DPoP.
type keyFile struct {
	Alg string  `json:"alg"`
	JWK *keyJWK `json:"jwk"`
}

type keyJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d"`
}

// marshalDPoPKey is the key file content of s (an ES256 signer).
func marshalDPoPKey(s *jwsSigner) ([]byte, error) {
	k, ok := s.key.(*ecdsa.PrivateKey)
	if !ok || s.alg != "ES256" || k.Curve != elliptic.P256() {
		return nil, errors.New("only ES256 DPoP keys are stored")
	}
	d, err := k.Bytes()
	if err != nil {
		return nil, err
	}
	pub := s.publicJWK()
	return json.MarshalIndent(keyFile{Alg: "ES256", JWK: &keyJWK{
		Kty: "EC", Crv: "P-256", X: pub["x"].(string), Y: pub["y"].(string), D: b64.EncodeToString(d),
	}}, "", "  ")
}

// parseDPoPKey reads a key file's content. Anything but an ES256 P-256
// private key whose public half matches its private scalar is refused;
// errors never quote the content, since it holds the key.
func parseDPoPKey(data []byte) (*jwsSigner, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f keyFile
	if err := dec.Decode(&f); err != nil {
		return nil, errors.New("not a DPoP key file (invalid JSON)")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a DPoP key file (trailing data)")
	}
	if f.Alg != "ES256" || f.JWK == nil || f.JWK.Kty != "EC" || f.JWK.Crv != "P-256" {
		return nil, errors.New("not a DPoP key file (want an ES256 P-256 key)")
	}
	raw := func(s string) []byte {
		b, err := b64.Strict().DecodeString(s)
		if err != nil || len(b) != 32 {
			return nil
		}
		return b
	}
	d, x, y := raw(f.JWK.D), raw(f.JWK.X), raw(f.JWK.Y)
	if d == nil || x == nil || y == nil {
		return nil, errors.New("not a DPoP key file (bad key encoding)")
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, errors.New("not a DPoP key file (not a P-256 private key)")
	}
	pub, err := key.PublicKey.Bytes() // 0x04 ‖ X ‖ Y
	if err != nil || !bytes.Equal(pub[1:33], x) || !bytes.Equal(pub[33:], y) {
		return nil, errors.New("not a DPoP key file (public key does not match the private key)")
	}
	return &jwsSigner{alg: "ES256", key: key}, nil
}

// thumbprint is the RFC 7638 SHA-256 thumbprint of the signer's public
// key, base64url: the jkt a DPoP-bound token's cnf names.
func (s *jwsSigner) thumbprint() string {
	j, _ := json.Marshal(s.publicJWK()) // map keys sort: the RFC 7638 member order
	sum := sha256.Sum256(j)
	return b64.EncodeToString(sum[:])
}

// keyFileError is a key file the Client will not use.
func keyFileError(file, server, why string) error {
	return &KeyFileError{Server: server, File: file, Problem: why}
}

// loadDPoPKey reads the key the stored tokens of server are bound to
// (thumbprint jkt). Every way it can fail is an error naming the file: a
// missing file, one others may read or that is not a regular file, content
// that is not a key, and a key that is not the one the tokens name.
func loadDPoPKey(dir, server, jkt string) (*jwsSigner, error) {
	file := DPoPKeyFile(dir, server)
	fi, err := os.Lstat(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, keyFileError(file, server, "is missing")
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, keyFileError(file, server, "cannot be read ("+err.Error()+")")
	}
	if !fi.Mode().IsRegular() {
		return nil, keyFileError(file, server, "is not a regular file")
	}
	// Read through safefile, which checks the file it opened: the path
	// could have been swapped since Lstat (for a named pipe, whose open
	// would wait for a writer, among others).
	data, ofi, err := safefile.Read(file, maxKeyFile)
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, keyFileError(file, server, "is too large to be a key")
	}
	if err != nil {
		return nil, keyFileError(file, server, "cannot be read")
	}
	if !os.SameFile(fi, ofi) {
		return nil, keyFileError(file, server, "changed while it was read")
	}
	if perm := ofi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, keyFileError(file, server, fmt.Sprintf("has mode %04o, so others may read the private key (it must be 0600)", perm))
	}
	if who := fileowner.Other(ofi); who != "" {
		return nil, keyFileError(file, server, "belongs to "+who+", so the key may be theirs")
	}
	s, err := parseDPoPKey(data)
	if err != nil {
		return nil, keyFileError(file, server, "is corrupt: "+err.Error())
	}
	if s.thumbprint() != jkt {
		return nil, keyFileError(file, server, "holds another key than the one the tokens are bound to")
	}
	return s, nil
}

// saveDPoPKey writes the key file 0600 (directory 0700) in one step.
func saveDPoPKey(dir, server string, s *jwsSigner) error {
	data, err := marshalDPoPKey(s)
	if err != nil {
		return err
	}
	return writeStoreFile(dir, DPoPKeyFile(dir, server), data)
}

// removeStoreFile removes file, reporting whether it was there.
func removeStoreFile(file string) (bool, error) {
	err := os.Remove(file)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
