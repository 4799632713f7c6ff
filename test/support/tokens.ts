// Accounts and tokens, as backplane/testing gives them to applications.
export * from '../../src/testing/tokens.ts';
