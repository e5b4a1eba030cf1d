import { webcrypto } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { OAuthFlowError } from './errors';

/** Token-endpoint authentication methods we speak (RFC 7591 §2 names). */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';

export interface ClientPrivateKey {
  /** PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). */
  pem: string;
  /** JWS algorithm: ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512 or EdDSA. */
  algorithm: string;
}

/** The method for a client: what it registered with, else what the server supports and the client can do. */
export function chooseAuthMethod(
  configured: string | undefined,
  hasSecret: boolean,
  hasKey: boolean,
  supported: readonly string[] | undefined,
): TokenEndpointAuthMethod {
  if (
    configured === 'client_secret_basic' ||
    configured === 'client_secret_post' ||
    configured === 'none' ||
    configured === 'private_key_jwt'
  ) {
    return configured;
  }
  if (hasKey) return 'private_key_jwt';
  if (!hasSecret) return 'none';
  // RFC 8414 §2: an absent list means client_secret_basic.
  const methods = supported ?? ['client_secret_basic'];
  if (methods.includes('client_secret_basic')) return 'client_secret_basic';
  if (methods.includes('client_secret_post')) return 'client_secret_post';
  return methods.includes('none') ? 'none' : 'client_secret_basic';
}

export async function clientAuthentication(
  method: TokenEndpointAuthMethod,
  secret: string | undefined,
  key: ClientPrivateKey | undefined,
): Promise<oauth.ClientAuth> {
  switch (method) {
    case 'none':
      return oauth.None();
    case 'client_secret_post':
      if (!secret) throw new OAuthFlowError('client_secret_post needs a client secret');
      return oauth.ClientSecretPost(secret);
    case 'client_secret_basic':
      if (!secret) throw new OAuthFlowError('client_secret_basic needs a client secret');
      return basicAuthentication(secret);
    case 'private_key_jwt':
      if (!key) throw new OAuthFlowError('private_key_jwt needs a private key');
      return oauth.PrivateKeyJwt((await importPrivateKey(key)) as unknown as Parameters<typeof oauth.PrivateKeyJwt>[0]);
  }
}

/**
 * client_secret_basic. RFC 6749 §2.3.1 form-encodes the id and secret before Basic encoding;
 * oauth4webapi's version also escapes `-`, `.`, `_` and `~`, which many servers do not decode
 * (an id like `my-client` then fails to match). encodeURIComponent leaves those unreserved
 * characters alone and still escapes the ones that matter (`:`, `%`, space, non-ASCII).
 */
function basicAuthentication(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`);
  };
}

type KeyImportParams = webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams | webcrypto.Algorithm;

const KEY_ALGORITHMS: Record<string, KeyImportParams> = {
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
  ES384: { name: 'ECDSA', namedCurve: 'P-384' },
  ES512: { name: 'ECDSA', namedCurve: 'P-521' },
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  RS384: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' },
  RS512: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256' },
  PS384: { name: 'RSA-PSS', hash: 'SHA-384' },
  PS512: { name: 'RSA-PSS', hash: 'SHA-512' },
  EdDSA: { name: 'Ed25519' },
};

async function importPrivateKey(key: ClientPrivateKey): Promise<webcrypto.CryptoKey> {
  const params = KEY_ALGORITHMS[key.algorithm];
  if (!params) throw new OAuthFlowError(`Unsupported signing algorithm for private_key_jwt: ${key.algorithm}`);
  const body = key.pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  try {
    return await webcrypto.subtle.importKey('pkcs8', Buffer.from(body, 'base64'), params, false, ['sign']);
  } catch (error) {
    throw new OAuthFlowError(`The private key could not be read as PKCS#8 ${key.algorithm}: ${(error as Error).message}`);
  }
}
