package solanart

import "embed"

// nodeFiles holds the Node project: package.json, package-lock.json and server.mjs.
//
//go:embed node/package.json node/package-lock.json node/server.mjs
var nodeFiles embed.FS

// nodeDir is the directory of the Node project inside nodeFiles.
const nodeDir = "node"
