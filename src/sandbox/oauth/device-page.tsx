import { Layout } from '../kernel/http/layout.js';

/**
 * The verification page of a device sign-in (RFC 8628 §3.3) before a code is known: one labelled
 * field and a button. A GET form: typing a code changes nothing, so it needs no anti-CSRF token.
 */
export function codeEntryPage(input: { value?: string; error?: string }) {
  return (
    <Layout title="Sign in a device">
      <h1>Sign in a device</h1>
      {input.error ? (
        <div class="error" role="alert">
          <p id="error-message">{input.error}</p>
        </div>
      ) : (
        ''
      )}
      <form method="get" action="/oauth/device">
        <p>
          <label for="user_code">Code shown on your device</label>{' '}
          <input
            id="user_code"
            name="user_code"
            value={input.value ?? ''}
            autocomplete="off"
            autocapitalize="characters"
            spellcheck={false}
            placeholder="XXXX-XXXX"
            required
          />
        </p>
        <p>
          <button type="submit">Continue</button>
        </p>
      </form>
      <p>
        <small>This is the mkt sandbox: no real users are affected.</small>
      </p>
    </Layout>
  );
}

/** What the person sees once they answered: return to the device. */
export function deviceDonePage(outcome: 'approved' | 'denied') {
  const approved = outcome === 'approved';
  return (
    <Layout title={approved ? 'Device signed in' : 'Sign-in denied'}>
      <h1>{approved ? 'Device signed in' : 'Sign-in denied'}</h1>
      <p id="outcome">
        {approved
          ? 'The device is signed in. You can close this page and return to it.'
          : 'Nothing was granted. You can close this page.'}
      </p>
    </Layout>
  );
}
