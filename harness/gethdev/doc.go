// Package gethdev runs a real local EVM node for tests and the development stack: geth in
// --dev mode (a single-node proof-of-stake chain with a simulated beacon, chain id 1337).
//
// Contract:
//
//   - [Start] spawns geth with --dev sealing on demand (--dev.period 0): a block for each arriving
//     transaction, and one each Options.Period (default 100 ms) while a transaction waits (in
//     the pool, or mined above the finalized block), each Options.IdlePeriod (default 1 s)
//     otherwise, that the node asks for with a withdrawal of 0 gwei (dev_addWithdrawal); geth's
//     own period counts whole seconds. HTTP
//     JSON-RPC on 127.0.0.1 with a port the kernel picks (--http.port 0), IPC off, and the APIs
//     eth, net, web3, txpool, debug and dev. The bound address is read from geth's own log line
//     "HTTP server started ... endpoint=127.0.0.1:PORT", never chosen beforehand, so parallel
//     nodes cannot race for a port. Start returns once eth_chainId answers 1337 and the
//     developer account is funded.
//   - The developer account is geth's well-known development key (the one geth imports into an
//     empty dev keystore; public, for local chains only). [Node.DevKey] hands it out so tests can
//     sign; [Node.Fund] sends ether from it and waits until the transfer is mined. A data
//     directory whose keystore already holds another account is refused.
//   - Finality: geth's simulated beacon finalizes in epochs of 32 blocks. The finalized block is
//     the last multiple of 32 below the head (the head itself when it is a multiple of 32), so
//     a transaction mined at height h is finalized once the head reaches the next multiple of 32
//     at or above h: at most 32 blocks, 32 periods (3.2 s by default), later. Block timestamps
//     step at least a second a block (the simulated beacon's rule), so they run ahead of the
//     wall clock; nothing here reads them as wall time.
//   - [Node.Close] stops geth (SIGTERM to its process group, SIGKILL after a grace period),
//     reaps it and removes a data directory Start created. On Linux geth also gets SIGKILL when
//     the thread that started it dies (Pdeathsig), so a test binary that dies without Close
//     does not leave geth running.
//   - The geth binary is Options.Binary, else $GETH, else the pinned one scripts/tools.sh geth
//     installs (built once into the per-user cache; the script is found by walking up from the
//     working directory).
package gethdev
