// The part of npm-package-arg (which ships no types) that `backplane new` and `upgrade` use.
declare module 'npm-package-arg' {
  interface PackageArg {
    type: 'alias' | 'directory' | 'file' | 'git' | 'range' | 'remote' | 'tag' | 'version';
    /** For file and directory specs, the absolute path. */
    fetchSpec: string | null;
    rawSpec: string;
  }
  /** Throws an error with a code (EINVALIDTAGNAME, EINVALIDPACKAGENAME, …) for a spec npm would refuse. */
  function npa(arg: string, where?: string): PackageArg;
  namespace npa {
    function resolve(name: string, spec: string, where?: string): PackageArg;
  }
  export = npa;
}
