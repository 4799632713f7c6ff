/** A check /readyz and /ops/system run; any module may contribute some. */
export interface ReadinessCheck {
  /** Shown in /readyz and /ops/system: lowercase, one per check. */
  name: string;
  /**
   * Resolves when healthy, with the instant the fact was observed when it is older than now (a
   * cached answer); a rejection's text is never shown to clients.
   */
  run(): Promise<void | Date>;
  /** The fixed sentence shown when the check fails. */
  failure: string;
  /** Reported like the others but never fails readiness (a third party's outage must not empty the load balancer). */
  optional?: boolean;
  /** When the condition the check reports began, shown beside its failure. */
  since?: () => Date | undefined;
}
