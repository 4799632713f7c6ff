// The throw-away databases of backplane/testing, which the suite uses as applications do.
export * from '../../src/testing/database.ts';
