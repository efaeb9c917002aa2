#!/usr/bin/env bash
# Makes the throwaway CA and certificates of the conformance suite's TLS transcripts
# (committed, valid for 100 years; they protect nothing: never use them for a real
# referee). Needs openssl. Files: ca.pem (the CA the bots trust), server.pem/.key
# (localhost and 127.0.0.1), client.pem/.key (signed by the CA, for mutual TLS),
# other-ca.pem (a CA that signed nothing here: trusting it must fail).
set -euo pipefail
cd "$(dirname "$0")"
days=36500
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=pusoy conformance CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj "/CN=pusoy other CA" \
  -keyout other-ca.key -out other-ca.pem 2>/dev/null
rm other-ca.key
sign() { # name subject extensions
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
    -extfile <(printf '%s\n' "$3") -out "$1.pem" 2>/dev/null
  rm "$1.csr"
}
sign server "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth"
sign client "/CN=conformance-bot" "extendedKeyUsage=clientAuth"
rm -f ca.srl ca.key  # nothing more is ever signed with it
echo "made $(ls *.pem | tr '\n' ' ')in $(pwd)"
