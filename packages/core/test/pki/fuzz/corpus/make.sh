#!/bin/sh
# Regenerates the fuzz seed corpus with openssl (run from this directory; the files are
# committed so that a seeded fuzz run replays exactly). Real-world shapes: CSRs with every
# extension certwright reads, CA and leaf certificates with the usual extensions, OCSP
# requests (plain, with nonce, SHA-256, several CertIDs, signed), a CRL with entries, keys.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/req.cnf" <<'CNF'
[req]
prompt = no
distinguished_name = dn
attributes = attrs
req_extensions = ext
[dn]
C = DE
ST = Berlin
O = Example GmbH
OU = Platform + Ops
CN = csr.example.test
emailAddress = ops@example.test
[attrs]
challengePassword = s3cret-otp
[ext]
subjectAltName = DNS:csr.example.test,DNS:*.csr.example.test,IP:192.0.2.1,IP:2001:db8::7,email:ops@example.test,URI:https://example.test/id,otherName:1.3.6.1.4.1.311.20.2.3;UTF8:upn@example.test
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
basicConstraints = critical,CA:FALSE
subjectKeyIdentifier = hash
1.3.6.1.5.5.7.1.24 = DER:30:03:02:01:05
CNF

cat >"$tmp/ca.cnf" <<'CNF'
[ca]
default_ca = ca
[ca]
dir = TMP
database = TMP/index.txt
new_certs_dir = TMP
certificate = TMP/ca.pem
private_key = TMP/ca.key
serial = TMP/serial
crlnumber = TMP/crlnumber
default_md = sha256
default_crl_days = 7
policy = any
[any]
commonName = supplied
[v3_ca]
basicConstraints = critical,CA:TRUE,pathlen:1
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
nameConstraints = critical,permitted;DNS:.example.test,excluded;IP:10.0.0.0/255.0.0.0
certificatePolicies = 2.23.140.1.2.1,1.3.6.1.4.1.99999.1.2
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth,clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid,issuer
subjectAltName = DNS:leaf.example.test,DNS:www.leaf.example.test,IP:192.0.2.10
authorityInfoAccess = OCSP;URI:http://ocsp.example.test,caIssuers;URI:http://ca.example.test/ca.cer
crlDistributionPoints = URI:http://crl.example.test/ca.crl
1.3.6.1.5.5.7.1.24 = DER:30:03:02:01:05
CNF
sed -i "s#TMP#$tmp#g" "$tmp/ca.cnf"
touch "$tmp/index.txt"; echo 1000 >"$tmp/serial"; echo 01 >"$tmp/crlnumber"

key() { openssl genpkey "$@" 2>/dev/null; }
key -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/rsa.key"
key -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/p256.key"
key -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$tmp/p384.key"
key -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out "$tmp/p521.key"
key -algorithm ED25519 -out "$tmp/ed25519.key"
key -algorithm ED448 -out "$tmp/ed448.key"

for k in rsa p256 p384 p521 ed25519 ed448; do
  openssl pkcs8 -topk8 -nocrypt -in "$tmp/$k.key" -outform DER -out "key-$k.pkcs8.der"
  openssl pkey -in "$tmp/$k.key" -pubout -outform DER -out "key-$k.spki.der"
done
openssl ec -in "$tmp/p256.key" -pubout -conv_form compressed -outform DER -out key-p256-compressed.spki.der 2>/dev/null

for k in rsa p256 p384 ed25519 ed448; do
  openssl req -new -config "$tmp/req.cnf" -key "$tmp/$k.key" -outform DER -out "csr-$k.der"
done

openssl req -x509 -new -key "$tmp/p256.key" -subj "/C=DE/O=certwright fuzz/CN=fuzz root CA" -days 3650 \
  -config "$tmp/ca.cnf" -extensions v3_ca -out "$tmp/ca.pem" 2>/dev/null
cp "$tmp/p256.key" "$tmp/ca.key"
openssl x509 -in "$tmp/ca.pem" -outform DER -out cert-ca-p256.der
openssl req -x509 -new -key "$tmp/rsa.key" -subj "/DC=test/DC=example/O=certwright fuzz/CN=rsa root" -days 365 \
  -outform DER -out cert-ca-rsa.der
openssl req -x509 -new -key "$tmp/ed25519.key" -subj "/CN=ed25519 self-signed" -days 365 -outform DER -out cert-ed25519.der
for k in rsa p384 ed448; do
  openssl req -new -key "$tmp/$k.key" -subj "/CN=leaf-$k" -out "$tmp/leaf-$k.csr"
  openssl ca -batch -config "$tmp/ca.cnf" -extensions leaf -in "$tmp/leaf-$k.csr" -days 90 -out "$tmp/leaf-$k.pem" 2>/dev/null
  openssl x509 -in "$tmp/leaf-$k.pem" -outform DER -out "cert-leaf-$k.der"
done
openssl ca -config "$tmp/ca.cnf" -revoke "$tmp/leaf-rsa.pem" -crl_reason keyCompromise 2>/dev/null
openssl ca -config "$tmp/ca.cnf" -revoke "$tmp/leaf-p384.pem" -crl_reason superseded 2>/dev/null
openssl ca -gencrl -config "$tmp/ca.cnf" -out "$tmp/ca.crl" 2>/dev/null
openssl crl -in "$tmp/ca.crl" -outform DER -out crl-p256.der

openssl ocsp -issuer "$tmp/ca.pem" -cert "$tmp/leaf-rsa.pem" -no_nonce -reqout ocsp-plain.der
openssl ocsp -issuer "$tmp/ca.pem" -cert "$tmp/leaf-rsa.pem" -reqout ocsp-nonce.der
openssl ocsp -sha256 -issuer "$tmp/ca.pem" -cert "$tmp/leaf-p384.pem" -reqout ocsp-sha256.der
openssl ocsp -issuer "$tmp/ca.pem" -serial 0x1000 -serial 0x1001 -serial 0x0badc0ffee -reqout ocsp-three.der
openssl ocsp -issuer "$tmp/ca.pem" -cert "$tmp/leaf-rsa.pem" -signer "$tmp/leaf-rsa.pem" -signkey "$tmp/rsa.key" \
  -reqout ocsp-signed.der
