#!/bin/sh
# Writes the files the production overlay's secretGenerator reads (one file per secret), with a
# freshly generated key:
#   APP_ENCRYPTION_KEY   32 random bytes, hex (AES-256-GCM for provider tokens and signing keys at rest)
#   DATABASE_URL         the connection string (its password may instead come from PGPASSWORD_FILE)
#   APP_OIDC_PROVIDERS   the providers with their client secrets, `[]` for none
# Usage: DATABASE_URL='postgres://user:pass@host:5432/backplane' [APP_OIDC_PROVIDERS='[…]'] \
#          deploy/kubernetes/create-secret.sh [folder]    (default: overlays/production/secrets)
# It never replaces an existing file: losing APP_ENCRYPTION_KEY loses every stored provider token
# and signing key (rotate by prepending a new key instead). Keep the folder out of git.
# No APP_JWT_PRIVATE_KEY: access tokens are signed by keys the instances generate and seal in the
# database, which `backplane keys rotate` replaces; components/pinned-signing-key says how to pin one.
set -eu
folder=${1:-$(dirname "$0")/overlays/production/secrets}
: "${DATABASE_URL:?set DATABASE_URL to the PostgreSQL connection string}"
umask 077
mkdir -p "$folder"
for name in DATABASE_URL APP_ENCRYPTION_KEY APP_OIDC_PROVIDERS; do
  if [ -e "$folder/$name" ]; then
    echo "$folder/$name exists: not replaced (edit it, or remove it first)" >&2
    exit 1
  fi
done
openssl rand -hex 32 | tr -d '\n' > "$folder/APP_ENCRYPTION_KEY"
printf '%s' "$DATABASE_URL" > "$folder/DATABASE_URL"
printf '%s' "${APP_OIDC_PROVIDERS:-[]}" > "$folder/APP_OIDC_PROVIDERS"
echo "wrote $folder; now: kubectl apply -k $(dirname "$0")/overlays/production"
