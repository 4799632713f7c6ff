import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { mountedSecretFiles, processIdentity, readSecretsAsContainer, writeAsKubelet } from './kubelet.ts';
import { type Manifest, kitWithSecrets, kustomize, root } from './manifests.ts';

// The pods read every secret from a file of the mounted Secret (ADR 0124). These tests write those
// files as the kubelet would for the rendered production kit, and read them with the application's
// own reader as the container's user: a mode or group the user cannot read fails here, not at start.
if (process.getuid?.() !== 0) {
  throw new Error("test/deploy/secretFiles.test.ts runs as root: it gives files the kubelet's owner and group, and reads them as the image's user");
}

const rendered = kustomize('overlays/production', kitWithSecrets());
const secrets = new Map(
  rendered
    .filter((manifest) => manifest.kind === 'Secret')
    .map((manifest) => [manifest.metadata.name, (manifest as unknown as { data: Record<string, string> }).data]),
);
const image = (() => {
  const [uid, gid] = /^USER\s+(\d+):(\d+)$/m
    .exec(readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8'))!
    .slice(1)
    .map(Number);
  return { uid: uid!, gid: gid! };
})();
const podOf = (manifest: Manifest) => (manifest as unknown as { spec: { template: { spec: IPodSpec } } }).spec.template.spec;
const workloads = rendered.filter((manifest) => manifest.kind === 'Deployment' || manifest.kind === 'Job');
const fileVariables = (container: IContainer) =>
  Object.fromEntries((container.env ?? []).filter((entry) => entry.name.endsWith('_FILE') && entry.value).map((entry) => [entry.name, entry.value!]));

/** What the container's process reads from its `*_FILE` variables, as the kubelet would have written `pod`'s volumes. */
function readAsDeployed(pod: IPodSpec, container: IContainer) {
  const files = mountedSecretFiles(pod, container, secrets);
  const containerRoot = writeAsKubelet(files);
  try {
    return { files, result: readSecretsAsContainer(containerRoot, processIdentity(pod, container, image), fileVariables(container)) };
  } finally {
    rmSync(containerRoot, { recursive: true, force: true });
  }
}

test('the production kit has a Deployment and a migrate Job that read secrets from files', (t) => {
  t.deepEqual(workloads.map((manifest) => manifest.kind).sort(), ['Deployment', 'Job']);
  for (const workload of workloads) {
    t.true(Object.keys(fileVariables(podOf(workload).containers[0]!)).includes('DATABASE_URL_FILE'), workload.kind);
  }
});

for (const kind of ['Deployment', 'Job']) {
  test(`${kind}: the image's user reads every secret file as the kubelet writes it, and only through its group`, (t) => {
    const pod = podOf(workloads.find((manifest) => manifest.kind === kind)!);
    for (const container of pod.containers) {
      const { files, result } = readAsDeployed(pod, container);
      t.is(result.error, undefined, container.name);
      const expected = Object.fromEntries(
        Object.entries(fileVariables(container)).map(([name, path]) => [
          name.replace(/_FILE$/, ''),
          files
            .find((file) => file.path === path)
            ?.content.toString('utf8')
            .replace(/[\r\n]+$/, ''),
        ]),
      );
      t.deepEqual(result.read, expected, container.name);
      // Not readable by every user: the reader's warning about such a key file stays silent.
      t.deepEqual(result.warnings, [], container.name);
      // Root owns every file, nothing is writable or readable by others: the group is what lets the user in.
      for (const file of files) {
        t.is(file.uid, 0, file.path);
        t.is(file.mode & 0o222, 0, `${file.path} is read-only`);
        t.is(file.mode & 0o007, 0, `${file.path} is not readable by others`);
      }
    }
  });

  test(`${kind}: without the pod's fsGroup the same files are root's alone and the reader refuses them (the reproduction catches it)`, (t) => {
    const pod = podOf(workloads.find((manifest) => manifest.kind === kind)!);
    const withoutGroup: IPodSpec = { ...pod, securityContext: { ...pod.securityContext, fsGroup: undefined } };
    const { result } = readAsDeployed(withoutGroup, withoutGroup.containers[0]!);
    // The reader's wording is its own (src/app/secretFiles.ts): it names the variable and refuses the file.
    t.regex(result.error ?? '', /^DATABASE_URL_FILE: cannot read /);
  });
}
