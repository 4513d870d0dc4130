// The operator's signing key, generated on first use under DATA_DIR: only its own directory is private. DATA_DIR
// itself keeps the default mode, because the embedded PostgreSQL (run as another user when the service runs as root)
// must reach its data directory inside it: a CLI command that generated the key before the first `npm start` used to
// leave DATA_DIR at 0700, and the first start then failed in initdb ("Permission denied").
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSigningKeys } from '../src/platform/auth/keys.ts';

const roots: string[] = [];
after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe('generated signing key', () => {
  it('makes keys/ private and leaves a new DATA_DIR reachable by other users', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'signing-keys-'));
    roots.push(root);
    const dataDir = path.join(root, 'data');
    const privateKeyFile = path.join(dataDir, 'keys', 'operator-signing-key.pem');
    const keys = await loadSigningKeys(
      { issuer: 'test', audience: 'test', algorithm: 'EdDSA', privateKeyFile, publicKeyFile: undefined, jwksUrl: undefined, generateKey: true },
      { create: true },
    );
    assert.equal(keys.created, true);
    const mode = (file: string) => stat(file).then((s) => s.mode & 0o777);
    assert.equal(await mode(path.join(dataDir, 'keys')), 0o700, 'the key directory is private');
    assert.equal(await mode(privateKeyFile), 0o600, 'the key is private');
    // The mode a plain mkdir gives under this process's umask (0755 under the usual 022): DATA_DIR has that one, not
    // the key's 0700 (the test does not depend on the machine's umask).
    const sibling = path.join(root, 'plain');
    await mkdir(sibling);
    assert.equal(await mode(dataDir), await mode(sibling), `DATA_DIR has the default mode (${(await mode(dataDir)).toString(8)}), not 0700`);
  });
});
