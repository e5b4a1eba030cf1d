// src/core never imports 'vscode': src/core/tsconfig.json maps that name here, and this file is not a
// module, so any `import ... from 'vscode'` (type-only too) fails `tsc -p src/core` with TS2306.
// The editor layer (src/vscode) is where VS Code's API is used.
