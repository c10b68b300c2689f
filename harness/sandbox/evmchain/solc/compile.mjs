// Compiles every contracts/*.sol with the pinned solc (standard JSON) and writes, for each
// contract with bytecode, <out>/<Name>.json: {contractName, sourceName, compiler, abi, bytecode}.
// Usage: node compile.mjs <contracts dir> <out dir>
// Output depends only on the sources and this file: the same inputs give the same bytes.
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const [contractsDir, outDir] = process.argv.slice(2);
if (!contractsDir || !outDir) {
  console.error('usage: node compile.mjs <contracts dir> <out dir>');
  process.exit(2);
}

const sources = {};
for (const name of fs.readdirSync(contractsDir).filter((n) => n.endsWith('.sol')).sort()) {
  sources[name] = { content: fs.readFileSync(path.join(contractsDir, name), 'utf8') };
}
if (Object.keys(sources).length === 0) {
  console.error(`no .sol files in ${contractsDir}`);
  process.exit(1);
}

const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    metadata: { bytecodeHash: 'none', appendCBOR: false },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === 'error');
for (const e of output.errors || []) {
  console.error(e.formattedMessage);
}
if (errors.length > 0) {
  process.exit(1);
}

fs.mkdirSync(outDir, { recursive: true });
const version = solc.version();
for (const sourceName of Object.keys(output.contracts).sort()) {
  for (const contractName of Object.keys(output.contracts[sourceName]).sort()) {
    const c = output.contracts[sourceName][contractName];
    if (!c.evm.bytecode.object) {
      continue; // interfaces and abstract contracts
    }
    const artifact = {
      contractName,
      sourceName,
      compiler: `solc ${version}`,
      abi: c.abi,
      bytecode: '0x' + c.evm.bytecode.object,
    };
    fs.writeFileSync(path.join(outDir, `${contractName}.json`), JSON.stringify(artifact, null, 2) + '\n');
  }
}
