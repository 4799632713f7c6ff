// What the kubelet makes of a pod's Secret volumes, on a real file system: the files it writes,
// with the owner, group and mode it gives them, and the identity the container's process reads
// them with. Kubernetes' pkg/volume: the secret plugin writes each file with its item's mode (else
// the volume's defaultMode, else 0644) as root:root; with an fsGroup, SetVolumeOwnership then gives
// each file that group and adds group read (0440, a secret volume being read-only).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { root } from './manifests.ts';

const DEFAULT_MODE = 0o644;
const FS_GROUP_READ = 0o440;

export interface ProcessIdentity {
  uid: number;
  gid: number;
  groups: number[];
}

export interface MountedSecretFile {
  /** The path inside the container. */
  path: string;
  content: Buffer;
  uid: number;
  gid: number;
  mode: number;
}

/** The user, group and supplementary groups of a container's process; `image` is the Dockerfile's USER. */
export function processIdentity(pod: IPodSpec, container: IContainer, image: { uid: number; gid: number }): ProcessIdentity {
  const own = container.securityContext;
  const shared = pod.securityContext;
  const fsGroup = shared?.fsGroup;
  return {
    uid: own?.runAsUser ?? shared?.runAsUser ?? image.uid,
    gid: own?.runAsGroup ?? shared?.runAsGroup ?? image.gid,
    groups: [...(fsGroup === undefined ? [] : [fsGroup]), ...(shared?.supplementalGroups ?? [])],
  };
}

/** Every file of the Secret volumes `container` mounts, as the kubelet writes it; `secrets` maps a Secret's name to its data (base64). */
export function mountedSecretFiles(pod: IPodSpec, container: IContainer, secrets: Map<string, Record<string, string>>): MountedSecretFile[] {
  const fsGroup = pod.securityContext?.fsGroup;
  return (container.volumeMounts ?? []).flatMap((mount) => {
    const source = pod.volumes?.find((volume) => volume.name === mount.name)?.secret;
    if (!source) {
      return [];
    }
    const data = secrets.get(source.secretName ?? '');
    if (!data) {
      throw new Error(`volume ${mount.name}: no Secret ${source.secretName} in the rendered manifests`);
    }
    const items = source.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
    return items.map((item) => {
      const mode = item.mode ?? source.defaultMode ?? DEFAULT_MODE;
      return {
        path: join(mount.mountPath, item.path),
        content: Buffer.from(data[item.key]!.replace(/\s/g, ''), 'base64'),
        uid: 0,
        gid: fsGroup ?? 0,
        mode: fsGroup === undefined ? mode : mode | FS_GROUP_READ,
      };
    });
  });
}

/** Writes the files under a fresh folder standing for the container's root; returns that folder. */
export function writeAsKubelet(files: MountedSecretFile[]): string {
  const container = mkdtempSync(join(tmpdir(), 'backplane-kubelet-'));
  // The container's own directories are world-traversable; only the files' modes are under test.
  chmodSync(container, 0o755);
  for (const file of files) {
    const path = join(container, file.path);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o755 });
    writeFileSync(path, file.content);
    chownSync(path, file.uid, file.gid);
    chmodSync(path, file.mode);
  }
  return container;
}

/** What the reader made of the files: each secret's text and its warnings, or its one-line refusal. */
export interface ReaderResult {
  read?: Record<string, string>;
  warnings?: string[];
  error?: string;
}

// The child loads the reader as root, then becomes the container's user before reading anything.
const READ_AS_CONTAINER = `
const { withSecretFiles } = await import(process.env.SECRET_READER);
const identity = JSON.parse(process.env.IDENTITY);
process.setgroups(identity.groups);
process.setgid(identity.gid);
process.setuid(identity.uid);
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.endsWith('_FILE')));
try {
  const resolved = withSecretFiles(env);
  const read = Object.fromEntries(Object.entries(resolved.env).filter(([name]) => !name.endsWith('_FILE')));
  console.log(JSON.stringify({ read, warnings: resolved.warnings }));
} catch (error) {
  console.log(JSON.stringify({ error: error.message }));
}
`;

/**
 * Runs the application's own secret reader (src/app/secretFiles.ts) in a process with the
 * container's identity, its `*_FILE` variables pointing into `containerRoot`.
 */
export function readSecretsAsContainer(containerRoot: string, identity: ProcessIdentity, fileVariables: Record<string, string>): ReaderResult {
  const env = Object.fromEntries(Object.entries(fileVariables).map(([name, path]) => [name, join(containerRoot, path)]));
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', READ_AS_CONTAINER], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: containerRoot, SECRET_READER: join(root, 'src', 'app', 'secretFiles.ts'), IDENTITY: JSON.stringify(identity), ...env },
  });
  if (child.status !== 0) {
    throw new Error(`the reader did not run: ${child.stderr}`);
  }
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as ReaderResult;
}
