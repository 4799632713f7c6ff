#!/bin/sh
# Creates the Secret `backplane` the Deployment reads, with freshly generated keys:
#   APP_JWT_PRIVATE_KEY  Ed25519 private key, PKCS#8 PEM (signs access tokens)
#   APP_ENCRYPTION_KEY   32 random bytes, hex (AES-256-GCM for provider tokens at rest)
# Usage: DATABASE_URL='postgres://user:pass@host:5432/backplane' [APP_OIDC_PROVIDERS='[…]'] \
#          deploy/kubernetes/create-secret.sh [namespace]
# DRY_RUN=1 prints the Secret instead of creating it. It never replaces an existing Secret: losing
# APP_ENCRYPTION_KEY loses every stored provider token (rotate by prepending a new key instead).
set -eu
namespace=${1:-backplane}
: "${DATABASE_URL:?set DATABASE_URL to the PostgreSQL connection string}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umask 077
openssl genpkey -algorithm ed25519 -out "$work/jwt.pem"
openssl rand -hex 32 | tr -d '\n' > "$work/encryption.key"
printf '%s' "$DATABASE_URL" > "$work/database.url"
set -- --namespace "$namespace" \
  --from-file=DATABASE_URL="$work/database.url" \
  --from-file=APP_ENCRYPTION_KEY="$work/encryption.key" \
  --from-file=APP_JWT_PRIVATE_KEY="$work/jwt.pem"
if [ -n "${APP_OIDC_PROVIDERS:-}" ]; then
  printf '%s' "$APP_OIDC_PROVIDERS" > "$work/oidc.json"
  set -- "$@" --from-file=APP_OIDC_PROVIDERS="$work/oidc.json"
fi
if [ "${DRY_RUN:-}" = 1 ]; then
  kubectl create secret generic backplane "$@" --dry-run=client -o yaml
else
  kubectl create secret generic backplane "$@"
fi
