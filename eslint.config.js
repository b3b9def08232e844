// ESLint (`npm run lint`, part of `npm test`): typescript-eslint's type-aware
// rules for what the type checker does not catch, above all a promise nobody
// awaits (a write whose failure nobody sees, or a rejection that ends the
// process) and a promise handed where a plain value is expected. Only those
// rules are errors: formatting and style are left to the code's own
// consistency (no formatter: the tree is hand-formatted and reformatting it
// would bury its history for no reader's gain).
import tseslint from 'typescript-eslint'

const rules = {
  // node:test's test() and describe() return promises the runner itself awaits.
  '@typescript-eslint/no-floating-promises': ['error', {
    allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
  }],
  '@typescript-eslint/no-misused-promises': 'error',
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'packages/packs-sync/dist/**', 'src/web/client/**/*.js', '.tmp/**', 'data/**'] },
  {
    // TypeScript: each file through the tsconfig.json that holds it (the server's, the browser bundle's, packs-sync's).
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules,
  },
  {
    // The build and test scripts are plain JavaScript: the same rules, with types inferred through
    // tsconfig.lint-js.json (allowJs), which only this linter reads.
    files: ['**/*.js'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: './tsconfig.lint-js.json', tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules,
  },
)
