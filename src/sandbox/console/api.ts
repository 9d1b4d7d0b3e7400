/** An answer of the sandbox API to the console: the status, the JSON body, and the error if any. */
export interface ApiAnswer<T = unknown> {
  status: number;
  data: T;
  /** The API's `{error: {code, message}}`, for a status of 400 or more. */
  error?: { code: string; message: string };
}

/** How the console reaches the API: a fetch-like function (the sandbox's own handler, or the network). */
export type ApiTransport = (request: Request) => Promise<Response>;

/**
 * The sandbox API as the console calls it, with the session's own credential: the console shows and
 * does only what the API allows the developer, and every call is in the request log like any other.
 */
export class ConsoleApi {
  constructor(
    private readonly transport: ApiTransport,
    private readonly baseUrl: string,
    private readonly headers: Record<string, string>,
    /** Told when the API refuses the credential (401): revoked, expired, or its key deleted. */
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  /** One request; JSON in and out. */
  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    const init: RequestInit = { method, headers: { accept: 'application/json', ...this.headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await this.transport(new Request(`${this.baseUrl}${path}`, init));
    if (res.status === 401) this.onUnauthorized();
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    const error = (data as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    return {
      status: res.status,
      data: data as T,
      error:
        res.status >= 400
          ? {
              code: typeof error?.code === 'string' ? error.code : `http_${res.status}`,
              message: typeof error?.message === 'string' ? error.message : `The API answered ${res.status}.`,
            }
          : undefined,
    };
  }

  get<T = unknown>(path: string): Promise<ApiAnswer<T>> {
    return this.call<T>('GET', path);
  }

  /** The items of a list endpoint's first page (`{data: [...]}`), or [] when the endpoint is not there. */
  async list<T = unknown>(path: string): Promise<T[]> {
    const answer = await this.get<{ data?: T[] } | T[]>(path);
    if (answer.status !== 200) return [];
    return Array.isArray(answer.data) ? answer.data : (answer.data?.data ?? []);
  }

  /** Opens a long-lived GET (the request log's stream) and answers the raw response. */
  async stream(path: string, signal: AbortSignal): Promise<Response> {
    const res = await this.transport(
      new Request(`${this.baseUrl}${path}`, {
        headers: { accept: 'text/event-stream', ...this.headers },
        signal,
      }),
    );
    if (res.status === 401) this.onUnauthorized();
    return res;
  }
}
