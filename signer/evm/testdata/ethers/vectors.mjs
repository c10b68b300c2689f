// Golden vectors for signer/evm, computed with ethers (independent of go-ethereum).
// Run: npm ci && node vectors.mjs > vectors.json
import { Interface, Transaction, Wallet, encryptKeystoreJsonSync, getAddress, version } from "ethers";

// A well-known test key (the first development account of Hardhat and Anvil): never a real one.
const privateKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const wallet = new Wallet(privateKey);

// The method subset stakeflow calls, written independently of the Go package's ABI JSON.
const iface = new Interface([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function buyVoucherPOL(uint256 _amount, uint256 _minSharesToMint) returns (uint256 amountToDeposit)",
  "function sellVoucher_newPOL(uint256 claimAmount, uint256 maximumSharesToBurn)",
  "function unstakeClaimTokens_newPOL(uint256 unbondNonce)",
  "function withdrawRewardsPOL()",
  "function restakePOL() returns (uint256, uint256)",
]);

// Ethereum mainnet POL token and StakeManager proxy; a test validator share.
const chainId = 1n;
const polToken = getAddress("0x455e53cbb86018ac2b8092fdcd39d8444affc3f6");
const stakeManager = getAddress("0x5e3ef299fddf15eaa0432e6e66473ace8c13d908");
const validatorShare = getAddress("0x2ed3c3a2b8a7a3b2b2a8a9d07ee0ba1e8bb1c0e7");
const fees = { maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_500_000_000n };

const cases = [
  { name: "approve", operation: "approve", method: "approve", to: polToken, nonce: 0n, gasLimit: 60_000n,
    args: [stakeManager, 1_000_000_000_000_000_000n] },
  { name: "delegate", operation: "delegate", method: "buyVoucherPOL", to: validatorShare, nonce: 1n, gasLimit: 350_000n,
    args: [1_000_000_000_000_000_000n, 995_000_000_000_000_000n] },
  { name: "unstake", operation: "unstake", method: "sellVoucher_newPOL", to: validatorShare, nonce: 2n, gasLimit: 400_000n,
    args: [500_000_000_000_000_000n, 502_500_000_000_000_000n] },
  { name: "claim", operation: "claim", method: "unstakeClaimTokens_newPOL", to: validatorShare, nonce: 3n, gasLimit: 300_000n,
    args: [7n] },
  { name: "withdraw-rewards", operation: "withdraw-rewards", method: "withdrawRewardsPOL", to: validatorShare, nonce: 4n, gasLimit: 250_000n,
    args: [] },
  { name: "restake", operation: "restake", method: "restakePOL", to: validatorShare, nonce: 5n, gasLimit: 300_000n,
    args: [] },
  // Values near the edges of their encodings: a large nonce, a 32-byte amount, a fee of one wei.
  { name: "delegate-large", operation: "delegate", method: "buyVoucherPOL", to: validatorShare, nonce: 1_000_000n, gasLimit: 500_000n,
    args: [123_456_789_012_345_678_901_234_567_890n, 1n], fees: { maxFeePerGas: 1n, maxPriorityFeePerGas: 0n } },
];

const str = (v) => (typeof v === "bigint" ? v.toString() : v);
const vectors = [];
for (const c of cases) {
  const f = c.fees ?? fees;
  const data = iface.encodeFunctionData(c.method, c.args);
  const tx = Transaction.from({
    type: 2, chainId, nonce: Number(c.nonce), to: c.to, value: 0n, data, gasLimit: c.gasLimit,
    maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas, accessList: [],
  });
  const signed = Transaction.from(tx);
  signed.signature = wallet.signingKey.sign(tx.unsignedHash);
  vectors.push({
    name: c.name, operation: c.operation, method: c.method, args: c.args.map(str),
    tx: { chainId: str(chainId), nonce: str(c.nonce), to: c.to, gasLimit: str(c.gasLimit),
      maxFeePerGas: str(f.maxFeePerGas), maxPriorityFeePerGas: str(f.maxPriorityFeePerGas), value: "0" },
    calldata: data,
    unsigned: tx.unsignedSerialized,
    unsignedHash: tx.unsignedHash,
    signed: signed.serialized,
    hash: signed.hash,
    from: signed.from,
  });
}

const selectors = {};
for (const m of ["approve", "buyVoucherPOL", "sellVoucher_newPOL", "unstakeClaimTokens_newPOL", "withdrawRewardsPOL", "restakePOL"]) {
  selectors[m] = iface.getFunction(m).selector;
}

// A keystore v3 file written by ethers (light scrypt so the test runs fast), with its passphrase.
const passphrase = "correct horse battery staple";
const keystore = encryptKeystoreJsonSync(
  { address: wallet.address, privateKey },
  passphrase,
  { scrypt: { N: 4096, r: 8, p: 1 }, salt: new Uint8Array(32).fill(7), iv: new Uint8Array(16).fill(9),
    uuid: new Uint8Array(16).fill(3) },
);

console.log(JSON.stringify({
  generator: `ethers ${version}`,
  key: { privateKey, address: wallet.address },
  keystore: { json: keystore, passphrase, address: wallet.address },
  polToken, stakeManager, validatorShare,
  selectors,
  unlimited: iface.encodeFunctionData("approve", [stakeManager, (1n << 256n) - 1n]),
  vectors,
}, null, 2));
