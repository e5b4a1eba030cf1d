/**
 * Authorization could not be completed: discovery found nothing usable, the metadata failed a
 * check, the authorization server refused. The message is for the person at the keyboard and never
 * carries a token or a secret.
 */
export class OAuthFlowError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OAuthFlowError';
  }
}
