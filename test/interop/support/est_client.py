#!/usr/bin/env python3
"""
A minimal EST client (RFC 7030 simpleenroll and simplereenroll) on Python's standard library
and the openssl CLI: a second implementation, independent of certwright's own code, that the
interop test drives against the server.

  est_client.py {simpleenroll|simplereenroll} --url BASE --ca CA.pem --csr CSR.der --out CERT.pem
                [--user USER --password PASSWORD] [--cert CERT.pem --key KEY.pem]

Exit status 0 with the issued certificate written as PEM; 2 with the HTTP status on stderr.
"""
import argparse
import base64
import http.client
import ssl
import subprocess
import sys
import urllib.parse


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("operation", choices=["simpleenroll", "simplereenroll"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--csr", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()

    context = ssl.create_default_context(cafile=args.ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    if args.cert:
        context.load_cert_chain(args.cert, args.key)
    url = urllib.parse.urlsplit(args.url)
    connection = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)

    headers = {"Content-Type": "application/pkcs10", "Content-Transfer-Encoding": "base64"}
    if args.user is not None:
        token = base64.b64encode(f"{args.user}:{args.password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    with open(args.csr, "rb") as f:
        # MIME-style base64: 76-character lines ended by LF.
        body = base64.encodebytes(f.read())
    connection.request("POST", f"{url.path.rstrip('/')}/{args.operation}", body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        print(f"HTTP {response.status}: {data.decode(errors='replace')}", file=sys.stderr)
        return 2
    content_type = response.getheader("Content-Type", "")
    if not content_type.startswith("application/pkcs7-mime"):
        print(f"unexpected Content-Type {content_type}", file=sys.stderr)
        return 3
    der = base64.b64decode(b"".join(data.split()), validate=True)
    pem = subprocess.run(
        ["openssl", "pkcs7", "-inform", "DER", "-print_certs"], input=der, capture_output=True, check=True
    ).stdout
    with open(args.out, "wb") as f:
        f.write(pem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
