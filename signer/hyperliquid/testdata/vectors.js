// Computes the golden values of signer/hyperliquid's tests with ethers v6, an EIP-712
// implementation independent of go-ethereum's: npm install ethers@6.13.4 && node vectors.js
// (the first line reproduces the Hyperliquid Python SDK's published UsdSend vector).
const { Wallet, Signature, TypedDataEncoder } = require('ethers');
const domain = (cid) => ({ name: 'HyperliquidSignTransaction', version: '1', chainId: cid, verifyingContract: '0x0000000000000000000000000000000000000000' });
async function sign(key, cid, types, msg) {
  const w = new Wallet(key);
  const sig = Signature.from(await w.signTypedData(domain(cid), types, msg));
  return { addr: w.address, digest: TypedDataEncoder.hash(domain(cid), types, msg), r: sig.r, s: sig.s, v: sig.v };
}
(async () => {
  const usd = { 'HyperliquidTransaction:UsdSend': [ {name:'hyperliquidChain',type:'string'},{name:'destination',type:'string'},{name:'amount',type:'string'},{name:'time',type:'uint64'} ] };
  console.log('usdSend', JSON.stringify(await sign('0x0123456789012345678901234567890123456789012345678901234567890123', 0x66eee, usd,
    { hyperliquidChain: 'Testnet', destination: '0x5e9ee1089755c3435139848e47e6635505d5a13a', amount: '1', time: 1687816341423 })));
  const cw = { 'HyperliquidTransaction:CWithdraw': [ {name:'hyperliquidChain',type:'string'},{name:'wei',type:'uint64'},{name:'nonce',type:'uint64'} ] };
  console.log('cw1', JSON.stringify(await sign('0x0123456789012345678901234567890123456789012345678901234567890123', 0x66eee, cw, { hyperliquidChain: 'Testnet', wei: 150000000, nonce: 1764000000000 })));
  console.log('cw2', JSON.stringify(await sign('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318', 0x66eee, cw, { hyperliquidChain: 'Mainnet', wei: '12345678900000', nonce: 1764086400123 })));
  console.log('cw3', JSON.stringify(await sign('0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318', 0xa4b1, cw, { hyperliquidChain: 'Mainnet', wei: 1, nonce: 1764086400123 })));
})();
