// The operator's token-signing key. Generated on first start (Ed25519 by default)
// when the key file is the default one under DATA_DIR; otherwise read from the
// configured files or JWKS URL.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type { JwtAlgorithm, JwtConfig } from '../config.ts';

export interface SigningKeys {
  algorithm: JwtAlgorithm;
  /** Absent when the service only verifies (public key file or JWKS). */
  privateKey: KeyObject | undefined;
  verifyKey: KeyObject | JWTVerifyGetKey;
}

export function generateKeyPair(algorithm: JwtAlgorithm): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (algorithm) {
    case 'EdDSA':
      return generateKeyPairSync('ed25519');
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 3072 });
  }
}

function checkKeyMatches(algorithm: JwtAlgorithm, key: KeyObject, file: string): void {
  const expected = { EdDSA: 'ed25519', ES256: 'ec', RS256: 'rsa' }[algorithm];
  if (key.asymmetricKeyType !== expected) {
    throw new Error(`${file} holds a ${key.asymmetricKeyType} key but JWT_ALGORITHM is ${algorithm}`);
  }
}

async function readPrivateKey(file: string): Promise<KeyObject | undefined> {
  try {
    return createPrivateKey(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the JWT private key ${file}: ${(error as Error).message}`);
  }
}

/** Loads the keys; with `create`, generates the default key file when it does not exist yet. */
export async function loadSigningKeys(config: JwtConfig, options: { create: boolean }): Promise<SigningKeys & { created: boolean }> {
  let privateKey = await readPrivateKey(config.privateKeyFile);
  let created = false;
  if (!privateKey && config.generateKey && options.create && !config.publicKeyFile && !config.jwksUrl) {
    const pair = generateKeyPair(config.algorithm);
    // Only the key's own directory is private: the directories above it (DATA_DIR) keep the default mode, since the
    // embedded PostgreSQL, run as another user when we are root, must reach its data directory inside DATA_DIR. A
    // recursive mkdir with mode 0o700 made DATA_DIR private too when the CLI created the key before the first start.
    const keyDir = path.dirname(config.privateKeyFile);
    await mkdir(path.dirname(keyDir), { recursive: true });
    await mkdir(keyDir, { recursive: true, mode: 0o700 });
    await writeFile(config.privateKeyFile, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error; // another process generated it first: use theirs
      },
    );
    privateKey = await readPrivateKey(config.privateKeyFile);
    created = true;
  }
  if (privateKey) checkKeyMatches(config.algorithm, privateKey, config.privateKeyFile);

  let verifyKey: KeyObject | JWTVerifyGetKey;
  if (config.jwksUrl) {
    verifyKey = createRemoteJWKSet(new URL(config.jwksUrl), { cacheMaxAge: 10 * 60_000 });
  } else if (config.publicKeyFile) {
    const publicKey = createPublicKey(await readFile(config.publicKeyFile, 'utf8'));
    checkKeyMatches(config.algorithm, publicKey, config.publicKeyFile);
    verifyKey = publicKey;
  } else if (privateKey) {
    verifyKey = createPublicKey(privateKey);
  } else {
    throw new Error(`no JWT key: ${config.privateKeyFile} does not exist (set JWT_PRIVATE_KEY_FILE, JWT_PUBLIC_KEY_FILE or JWT_JWKS_URL)`);
  }
  return { algorithm: config.algorithm, privateKey, verifyKey, created };
}
