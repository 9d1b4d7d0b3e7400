// The fixed battery `mkt webhooks test` sends a handler (docs/PROTOCOL.md, "Grading a handler"):
// each case is what the marketplace sends, or a forgery of it, made with the wire's own delivery code.
import { EVENT_NAMES, HEADER, type EventName } from '../../wire.js';
import { MAX_DELIVERY_BYTES, envelopeBody, outboundHeaders, signedDelivery } from '../../wire/delivery.js';
import { signBody } from '../../wire/signing.js';
import { dataOfLength, eventData, newDeliveryId, newId, newUserId } from './payloads.js';

/** The class of answer a case must get: acknowledged, or refused by the handler. */
export type Expected = '2xx' | '4xx';

/** One HTTP request of a case: the exact bytes and headers. */
export interface CaseRequest {
  body: Buffer;
  headers: Record<string, string>;
}

/** One case of the battery. */
export interface BatteryCase {
  /** Stable id (`signature.bad_hex`): the JSON's key for this case. */
  id: string;
  /** What it sends, in a few words. */
  title: string;
  expected: Expected;
  /** The one line that says how to fix a handler that fails it. */
  fix: string;
  /** Sent in order; each must get the expected class of answer. */
  requests: CaseRequest[];
}

/** What the battery is made from. */
export interface BatteryInput {
  secret: string;
  /** The app the payloads name. */
  appId: string;
  /** Now, in ms (the envelope timestamps are taken from it). */
  now: number;
  /** The handler's timestamp tolerance, in seconds. */
  toleranceS: number;
}

const REFUSE = 'answer 4xx (401) and do nothing';

/** The battery, in the order it is sent. */
export function battery(input: BatteryInput): BatteryCase[] {
  const { secret, appId, now } = input;
  const stamp = (ms: number) => new Date(ms).toISOString();
  const signed = (event: string, data: unknown, at = now, id = newDeliveryId()): CaseRequest => {
    const d = signedDelivery(secret, { id, event, timestamp: stamp(at), data });
    return { body: Buffer.from(d.body), headers: d.headers };
  };
  /** A delivery whose body is `body` and whose signature header is `signature` (none when undefined). */
  const forged = (event: string, body: string, signature: string | undefined): CaseRequest => {
    const headers = outboundHeaders({ id: newDeliveryId(), event, signature: signature ?? '' });
    if (signature === undefined) delete headers[HEADER.signature];
    return { body: Buffer.from(body), headers };
  };
  const user = newUserId();
  const data = (event: EventName, userId = user) => eventData(event, { appId, userId, now });
  const created = signed('subscription.created', data('subscription.created'));
  // A valid envelope to forge signatures for: another user's subscription.
  const body = envelopeBody('subscription.created', stamp(now), data('subscription.created', newUserId()));
  const margin = 60_000;
  const late = newUserId();

  const valid = (event: EventName): BatteryCase => ({
    id: `valid.${event}`,
    title: `a valid ${event}`,
    expected: '2xx',
    fix: `verify over the raw bytes with the app's whsec_… secret (the whole string) and answer 2xx to a valid ${event}`,
    requests: [event === 'subscription.created' ? created : signed(event, data(event))],
  });
  return [
    ...EVENT_NAMES.map(valid),
    {
      id: 'duplicate',
      title: 'the subscription.created again (same id, same bytes)',
      expected: '2xx',
      fix: 'a delivery id seen before is done: answer 2xx again, without doing the work twice',
      requests: [created],
    },
    {
      id: 'signature.other_secret',
      title: 'signed with another secret',
      expected: '4xx',
      fix: `compare the signature with the HMAC of the raw body under your secret; on a mismatch ${REFUSE}`,
      requests: [forged('subscription.created', body, signBody(`whsec_${newId('x', 24)}`, body))],
    },
    {
      id: 'signature.missing',
      title: 'no X-Marketplace-Signature header',
      expected: '4xx',
      fix: `a delivery without X-Marketplace-Signature is not the marketplace's: ${REFUSE}`,
      requests: [forged('subscription.created', body, undefined)],
    },
    {
      id: 'signature.bad_hex',
      title: 'sha256= and 64 characters that are not hex',
      expected: '4xx',
      fix: `check the header is sha256= and 64 hex digits (or compare equal-length strings) before a constant-time compare; ${REFUSE}, never 5xx`,
      requests: [forged('subscription.created', body, `sha256=${'zx'.repeat(32)}`)],
    },
    {
      id: 'signature.tampered',
      title: 'one byte of the body changed after signing',
      expected: '4xx',
      fix: `verify the signature over the exact bytes received, on every delivery; ${REFUSE}`,
      requests: [tampered(signed('subscription.created', data('subscription.created', newUserId())))],
    },
    {
      id: 'signature.reserialized',
      title: 'a space added to the body after signing',
      expected: '4xx',
      fix: 'verify the raw bytes before parsing: a body parsed and serialized again is not what was signed',
      requests: [spaced(signed('subscription.created', data('subscription.created', newUserId())))],
    },
    {
      id: 'signature.other_body',
      title: 'a real signature, but of another body',
      expected: '4xx',
      fix: `compute the HMAC of this body and compare it with the header, not only its length or form; ${REFUSE}`,
      requests: [
        forged(
          'subscription.created',
          envelopeBody('subscription.created', stamp(now), data('subscription.created', newUserId())),
          signBody(secret, body),
        ),
      ],
    },
    {
      id: 'timestamp.stale',
      title: `a timestamp ${Math.round((input.toleranceS * 1000 + margin) / 60_000)} min old`,
      expected: '4xx',
      fix: `refuse (4xx) an envelope whose timestamp is more than ${input.toleranceS} s before now: it is a replay`,
      requests: [
        signed(
          'subscription.created',
          data('subscription.created', newUserId()),
          now - input.toleranceS * 1000 - margin,
        ),
      ],
    },
    {
      id: 'timestamp.future',
      title: `a timestamp ${Math.round((input.toleranceS * 1000 + margin) / 60_000)} min ahead`,
      expected: '4xx',
      fix: `refuse (4xx) a timestamp more than ${input.toleranceS} s from now either way: compare the absolute difference`,
      requests: [
        signed(
          'subscription.created',
          data('subscription.created', newUserId()),
          now + input.toleranceS * 1000 + margin,
        ),
      ],
    },
    {
      id: 'event.unknown',
      title: 'an event this handler does not know (subscription.paused)',
      expected: '2xx',
      fix: 'answer 2xx to an event you do not handle (ignore it): a 4xx or 5xx is retried, and new events appear',
      requests: [signed('subscription.paused', data('subscription.created', newUserId()))],
    },
    {
      id: 'event.extra_field',
      title: 'subscription.created with a field it does not know',
      expected: '2xx',
      fix: 'ignore fields you do not know in the envelope and its data: the marketplace adds fields',
      requests: [
        signed('subscription.created', { ...data('subscription.created', newUserId()), quantity: 1 }),
      ],
    },
    {
      id: 'size.limit',
      title: `a ${MAX_DELIVERY_BYTES / 1024 / 1024} MiB delivery (the largest there is)`,
      expected: '2xx',
      fix: `accept request bodies up to ${MAX_DELIVERY_BYTES} bytes (express.raw({limit: '1mb'}), Flask MAX_CONTENT_LENGTH, nginx client_max_body_size)`,
      requests: [
        signed(
          'user.authorized',
          dataOfLength(data('user.authorized', newUserId()), MAX_DELIVERY_BYTES, (d) =>
            Buffer.byteLength(envelopeBody('user.authorized', stamp(now), d)),
          ),
        ),
      ],
    },
    {
      id: 'order.cancelled_first',
      title: 'subscription.cancelled, then subscription.created, of one user',
      expected: '2xx',
      fix: 'deliveries arrive out of order: acknowledge (2xx) an event about a user you do not know yet, and decide by the timestamp',
      requests: [
        signed('subscription.cancelled', data('subscription.cancelled', late)),
        signed('subscription.created', data('subscription.created', late)),
      ],
    },
  ];
}

/** The request with one digit of the user id changed (still valid JSON, the same length). */
function tampered(r: CaseRequest): CaseRequest {
  const text = r.body.toString('utf8');
  const at = text.indexOf('"usr_') + 5;
  const digit = text[at] === '0' ? '1' : '0';
  return { ...r, body: Buffer.from(text.slice(0, at) + digit + text.slice(at + 1)) };
}

/** The request with one space after the first colon: the same JSON, other bytes. */
function spaced(r: CaseRequest): CaseRequest {
  const text = r.body.toString('utf8');
  const at = text.indexOf(':') + 1;
  return { ...r, body: Buffer.from(`${text.slice(0, at)} ${text.slice(at)}`) };
}
