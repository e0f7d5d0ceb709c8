package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math/big"
)

// jwsSigner signs compact JWS (RFC 7515) for client assertions (RFC 7523)
// and DPoP proofs (RFC 9449). It holds a private key and never prints it.
type jwsSigner struct {
	alg string
	key crypto.Signer
}

// parseSigningKey reads a PEM private key (PKCS#8, SEC 1 EC or PKCS#1
// RSA) and picks the JWS algorithm: ES256/384/512 by curve, RS256 for RSA.
// alg, if set, must agree with the key. Errors never quote the key.
func parseSigningKey(pemData []byte, alg string) (*jwsSigner, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, errors.New("private key does not parse")
	}
	var want string
	var signer crypto.Signer
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			want = "ES256"
		case elliptic.P384():
			want = "ES384"
		case elliptic.P521():
			want = "ES512"
		default:
			return nil, errors.New("private key is on an unsupported curve")
		}
		signer = k
	case *rsa.PrivateKey:
		want = "RS256"
		if alg == "RS384" || alg == "RS512" {
			want = alg
		}
		signer = k
	default:
		return nil, fmt.Errorf("private key type %T is not supported (EC or RSA)", key)
	}
	if alg != "" && alg != want {
		return nil, fmt.Errorf("signing algorithm %s does not fit the key (%s)", alg, want)
	}
	return &jwsSigner{alg: want, key: signer}, nil
}

// newDPoPSigner makes a fresh P-256 key for DPoP proofs.
func newDPoPSigner() (*jwsSigner, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &jwsSigner{alg: "ES256", key: k}, nil
}

var b64 = base64.RawURLEncoding

// sign returns header.payload.signature. header gets "alg" added.
func (s *jwsSigner) sign(header, claims map[string]any) (string, error) {
	h := map[string]any{"alg": s.alg}
	for k, v := range header {
		h[k] = v
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cj, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(hj) + "." + b64.EncodeToString(cj)
	var hf hash.Hash
	var ch crypto.Hash
	switch s.alg {
	case "ES256", "RS256":
		hf, ch = sha256.New(), crypto.SHA256
	case "ES384", "RS384":
		hf, ch = sha512.New384(), crypto.SHA384
	case "ES512", "RS512":
		hf, ch = sha512.New(), crypto.SHA512
	default:
		return "", fmt.Errorf("unsupported JWS algorithm %s", s.alg)
	}
	hf.Write([]byte(input))
	digest := hf.Sum(nil)
	var sig []byte
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		r, ss, err := ecdsa.Sign(rand.Reader, k, digest)
		if err != nil {
			return "", err
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		sig = make([]byte, 2*n)
		r.FillBytes(sig[:n])
		ss.FillBytes(sig[n:])
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, ch, digest)
		if err != nil {
			return "", err
		}
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// publicJWK is the public half of the key as a JWK (RFC 7517), members in
// the order RFC 7638 thumbprints use.
func (s *jwsSigner) publicJWK() map[string]any {
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		n := (k.Curve.Params().BitSize + 7) / 8
		return map[string]any{"crv": k.Curve.Params().Name, "kty": "EC", "x": b64.EncodeToString(pad(k.X, n)), "y": b64.EncodeToString(pad(k.Y, n))}
	case *rsa.PrivateKey:
		return map[string]any{"e": b64.EncodeToString(big.NewInt(int64(k.E)).Bytes()), "kty": "RSA", "n": b64.EncodeToString(k.N.Bytes())}
	}
	return nil
}

func pad(x *big.Int, n int) []byte {
	b := make([]byte, n)
	return x.FillBytes(b)
}

// randomID is a fresh jti.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return b64.EncodeToString(b[:])
}
