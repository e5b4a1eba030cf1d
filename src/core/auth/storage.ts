/**
 * Where tokens and client registrations are kept. The shape is VS Code's `SecretStorage`
 * (string values under string keys), so the editor layer can pass its own; the CLI keeps them in
 * memory for one run.
 */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

export class MemorySecretStore implements SecretStore {
  private readonly values = new Map<string, string>();
  async get(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.values.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }
}

/** Tokens for one protected resource. */
export interface StoredTokens {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  /** Epoch milliseconds; absent when the server did not say. */
  expiresAt?: number;
  /** The scopes we asked for (the server's answer when it named them). */
  scopes: string[];
  /** The authorization server that issued them, so a refresh goes back to the same one. */
  issuer: string;
}

/** A client registered with one authorization server (dynamic registration result). */
export interface StoredClient {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod?: string;
  redirectUris?: string[];
}

/** Typed JSON records over a SecretStore; one key per resource (tokens) and per issuer (client). */
export class AuthRecords {
  constructor(
    private readonly store: SecretStore,
    private readonly prefix = 'mcp-host.oauth',
  ) {}

  getTokens(resource: string): Promise<StoredTokens | undefined> {
    return this.read<StoredTokens>(`${this.prefix}.tokens:${resource}`);
  }
  async setTokens(resource: string, tokens: StoredTokens): Promise<void> {
    await this.store.store(`${this.prefix}.tokens:${resource}`, JSON.stringify(tokens));
  }
  async deleteTokens(resource: string): Promise<void> {
    await this.store.delete(`${this.prefix}.tokens:${resource}`);
  }
  getClient(issuer: string, redirectUri: string): Promise<StoredClient | undefined> {
    return this.read<StoredClient>(`${this.prefix}.client:${issuer} ${redirectUri}`);
  }
  async setClient(issuer: string, redirectUri: string, client: StoredClient): Promise<void> {
    await this.store.store(`${this.prefix}.client:${issuer} ${redirectUri}`, JSON.stringify(client));
  }
  async deleteClient(issuer: string, redirectUri: string): Promise<void> {
    await this.store.delete(`${this.prefix}.client:${issuer} ${redirectUri}`);
  }

  private async read<T>(key: string): Promise<T | undefined> {
    const text = await this.store.get(key);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as T;
    } catch {
      // A damaged entry is as good as none: the flow runs again and overwrites it.
      return undefined;
    }
  }
}
