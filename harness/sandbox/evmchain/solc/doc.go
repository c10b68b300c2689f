// Package solc compiles the sandbox's Solidity contracts with the pinned npm solc (0.8.30): the
// Node project beside this file (package.json, package-lock.json, compile.mjs) is embedded,
// installed once through harness/sandbox/npmcache, and run with node.
package solc
