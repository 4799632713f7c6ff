/** A JSON request as an operator's script makes it. */
export function sendJson(method: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export async function getJson<T = any>(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T; response: Response }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as T, response };
}
