import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.data/', 'api/', 'bench/results/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      curly: ['error', 'all'],
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The browser pages: plain modern JavaScript served as it is (src/console/sites.ts).
    files: ['src/console/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'history', 'fetch', 'Node', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'].map((name) => [name, 'readonly']),
      ),
    },
    rules: { 'no-undef': 'error' },
  },
  {
    // Plain JavaScript tools run by npm (test:compat once lost an import unnoticed).
    files: ['scripts/**/*.mjs', 'scripts/**/*.js', '*.js', '*.mjs'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'fetch', 'AbortController', 'AbortSignal', 'performance', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'queueMicrotask', 'structuredClone', 'TextEncoder', 'TextDecoder', 'globalThis'].map((name) => [name, 'readonly']),
      ),
    },
    rules: { 'no-undef': 'error' },
  },
  {
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['scripts/**', 'bench/**', 'src/commands/**', 'src/cli.ts', 'test/support/run.ts', 'test/support/oldServer.ts', 'test/support/apiExamples.ts'],
    rules: { 'no-console': 'off' },
  },
);
