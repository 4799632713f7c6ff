export const root: string;
export const POSTGRES: Record<'14' | '15' | '16' | '17', string>;
export function run(command: string, args: string[], options?: object): void;
export function install(name: string, spec: string): string;
export function postgresPrefix(version: string): string;
