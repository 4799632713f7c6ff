import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';
import { importPKCS8 } from 'jose';
import type { IPodSpec } from 'kubernetes-models/v1';
import { type Manifest, kitWithSecrets, kustomize } from './manifests.ts';

// By default the kit pins no signing key: the instances sign with the keys sealed in the database,
// which `backplane keys rotate` replaces with an overlap (ADR 0068). Pinning one is an opt-in.
const podOf = (manifests: Manifest[], kind: string) =>
  (manifests.find((manifest) => manifest.kind === kind) as unknown as { spec: { template: { spec: IPodSpec } } }).spec.template.spec;
const secretOf = (manifests: Manifest[]) =>
  (
    manifests.find((manifest) => manifest.kind === 'Secret' && manifest.metadata.name.startsWith('backplane-secrets')) as unknown as {
      data: Record<string, string>;
    }
  ).data;

test('by default nothing in the kit sets APP_JWT_PRIVATE_KEY, and the Secret script writes no signing key', (t) => {
  const kit = kitWithSecrets();
  t.false(existsSync(join(kit, 'overlays', 'production', 'secrets', 'APP_JWT_PRIVATE_KEY')));
  for (const manifests of [kustomize('base'), kustomize('overlays/production', kit)]) {
    t.notRegex(JSON.stringify(manifests), /APP_JWT_PRIVATE_KEY/);
  }
});

test('components/pinned-signing-key with the key file: the server reads APP_JWT_PRIVATE_KEY from the Secret, the migrate Job does not', async (t) => {
  const kit = kitWithSecrets();
  const overlay = join(kit, 'overlays', 'production', 'kustomization.yaml');
  const key = join(kit, 'overlays', 'production', 'secrets', 'APP_JWT_PRIVATE_KEY');
  // The three steps deploy/README.md gives: the component, the secretGenerator line, the key.
  writeFileSync(
    overlay,
    readFileSync(overlay, 'utf8')
      .replace('# - ../../components/pinned-signing-key', '- ../../components/pinned-signing-key')
      .replace('# - secrets/APP_JWT_PRIVATE_KEY', '- secrets/APP_JWT_PRIVATE_KEY'),
  );
  execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', key]);
  const manifests = kustomize('overlays/production', kit);
  const server = podOf(manifests, 'Deployment');
  const mount = server.containers[0]!.volumeMounts!.find((entry) => entry.name === server.volumes!.find((volume) => volume.secret)!.name)!;
  t.is(server.containers[0]!.env!.find((entry) => entry.name === 'APP_JWT_PRIVATE_KEY_FILE')?.value, `${mount.mountPath}/APP_JWT_PRIVATE_KEY`);
  t.falsy(server.containers[0]!.env!.find((entry) => entry.name === 'APP_JWT_PRIVATE_KEY'));
  t.notRegex(JSON.stringify(podOf(manifests, 'Job')), /APP_JWT_PRIVATE_KEY/);
  const pem = Buffer.from(secretOf(manifests).APP_JWT_PRIVATE_KEY!.replace(/\s/g, ''), 'base64').toString('utf8');
  await t.notThrowsAsync(importPKCS8(pem, 'EdDSA'));
  // The other settings survive the patch: it adds the variable, it replaces nothing.
  t.deepEqual(
    server.containers[0]!.env!.map((entry) => entry.name).filter((name) => name !== 'APP_JWT_PRIVATE_KEY_FILE'),
    podOf(kustomize('overlays/production', kitWithSecrets()), 'Deployment').containers[0]!.env!.map((entry) => entry.name),
  );
});
