import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { IPodSpec } from 'kubernetes-models/v1';
import { type Manifest, kitWithSecrets, kustomize } from './manifests.ts';

// A Job's pod template is immutable, so `kubectl apply` of a changed one fails. The kit names each
// migrate Job after a record of everything its template depends on (image, settings, secrets):
// a change is a new Job, the same kit leaves the finished one alone (deploy/README.md, step 3).
interface Variant {
  /** A line of the overlay's `images` entry, and what it becomes. */
  image?: [string, string];
  setting?: string;
  databaseUrl?: string;
  tracing?: boolean;
}

// One operator's kit (its secrets generated once); each variant is a copy of it, changed.
const original = kitWithSecrets();

/** The production overlay as an operator would change it, rendered. */
function render(variant: Variant = {}): Manifest[] {
  const kit = join(mkdtempSync(join(tmpdir(), 'backplane-kit-')), 'kubernetes');
  cpSync(original, kit, { recursive: true });
  const overlay = join(kit, 'overlays', 'production', 'kustomization.yaml');
  let text = readFileSync(overlay, 'utf8');
  if (variant.image) {
    text = text.replace(variant.image[0], variant.image[1]);
  }
  if (variant.setting) {
    text = text.replace('      - APP_TRUSTED_PROXIES=10.0.0.0/8\n', `      - APP_TRUSTED_PROXIES=10.0.0.0/8\n      - ${variant.setting}\n`);
  }
  if (variant.tracing) {
    text = text.replace('# - ../../components/tracing', '- ../../components/tracing');
  }
  writeFileSync(overlay, text);
  if (variant.databaseUrl) {
    writeFileSync(join(kit, 'overlays', 'production', 'secrets', 'DATABASE_URL'), variant.databaseUrl);
  }
  return kustomize('overlays/production', kit);
}

const jobOf = (manifests: Manifest[]) => {
  const jobs = manifests.filter((manifest) => manifest.kind === 'Job');
  if (jobs.length !== 1) {
    throw new Error(`expected one Job, found ${jobs.length}`);
  }
  return jobs[0]! as unknown as { metadata: { name: string; annotations?: Record<string, string> }; spec: { template: { spec: IPodSpec } } };
};
const jobName = (manifests: Manifest[]) => jobOf(manifests).metadata.name;
const named = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name) as unknown as {
    data?: Record<string, string>;
    stringData?: Record<string, string>;
  };

const shipped = render();

test('the same kit renders the same Job name: applying it again leaves the finished Job alone', (t) => {
  t.is(jobName(render()), jobName(shipped));
  // A valid Job name, short enough for the job-name label Kubernetes puts on its pods.
  t.regex(jobName(shipped), /^backplane-migrate-[a-z0-9]{10}$/);
  t.true(jobName(shipped).length <= 63);
});

for (const [change, variant] of [
  ['a new image tag', { image: ['newTag: "0.6.0"', 'newTag: "0.6.1"'] }],
  ['an image by digest', { image: ['newTag: "0.6.0"', `digest: sha256:${'a'.repeat(64)}`] }],
  ['a registry with a port', { image: ['newName: registry.example.com/backplane', 'newName: registry.example.com:5000/backplane'] }],
  ['a changed setting', { setting: 'LOG_LEVEL=debug' }],
  ['a rotated secret', { databaseUrl: 'postgres://backplane:rotated@db:5432/backplane' }],
  ['the tracing component', { tracing: true }],
] as [string, Variant][]) {
  test(`${change} is a new Job, with a valid name`, (t) => {
    const changed = render(variant);
    t.not(jobName(changed), jobName(shipped));
    t.regex(jobName(changed), /^backplane-migrate-[a-z0-9]{10}$/);
  });
}

test("the record holds what the Job's pod template depends on: its image, and the data of every ConfigMap and Secret it reads", (t) => {
  const job = jobOf(shipped);
  const record = named(shipped, 'Secret', job.metadata.name);
  t.truthy(record, 'the record is the Secret named like the Job');
  const pod = job.spec.template.spec;
  t.deepEqual(
    pod.containers.map((container) => container.image),
    [record.stringData?.image],
  );
  const configMaps = pod.containers.flatMap((container) => (container.envFrom ?? []).map((source) => source.configMapRef?.name)).filter(Boolean);
  const secrets = (pod.volumes ?? []).map((volume) => volume.secret?.secretName).filter(Boolean);
  t.true(configMaps.length > 0 && secrets.length > 0);
  for (const name of configMaps) {
    t.like(record.stringData, named(shipped, 'ConfigMap', name!).data!, name);
  }
  for (const name of secrets) {
    t.deepEqual(record.data, named(shipped, 'Secret', name!).data, name);
  }
  // Nothing else the template could change by: no env from elsewhere, no other volume kind.
  t.deepEqual(
    pod.containers.flatMap((container) => (container.env ?? []).filter((entry) => entry.valueFrom)),
    [],
  );
  t.deepEqual(
    (pod.volumes ?? []).filter((volume) => !volume.secret && !volume.emptyDir),
    [],
  );
});

test('nothing refers to the migrate Job or its record by the unsuffixed name, and no Argo CD hook holds it back', (t) => {
  const text = JSON.stringify(shipped);
  t.deepEqual(
    [...text.matchAll(/backplane-migrate(?!-[a-z0-9]{10}\b)[^"]*/g)].map((match) => match[0]),
    [],
  );
  t.deepEqual(
    Object.keys(jobOf(shipped).metadata.annotations ?? {}).filter((key) => key.startsWith('argocd.argoproj.io/')),
    [],
  );
});
