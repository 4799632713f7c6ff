import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { AppError } from '../errors.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// What koa-body's decompression (inflation) reads; the size limit counts the decompressed bytes.
const CONTENT_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);
const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * JSON-only bodies with a size limit: malformed JSON is 400 invalid_json, an oversized body 413
 * request_too_large, any other media type 415 unsupported_media_type, a content coding other than
 * gzip, deflate or br 415 unsupported_content_encoding, and a body that does not decode as its
 * coding says 400 bad_request.
 */
export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    jsonStrict: false,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError(error: Error) {
      const status = (error as { status?: number }).status;
      if (status === 413) {
        throw new AppError('request_too_large', `The body exceeds ${limitBytes} bytes.`);
      }
      if (status === 415) {
        throw new AppError('unsupported_content_encoding', `Request bodies may be sent as ${ACCEPT_ENCODING} or uncompressed.`, {
          headers: { 'Accept-Encoding': ACCEPT_ENCODING },
        });
      }
      // Parse errors carry a status; a decompression stream's errors do not.
      if (status === undefined) {
        throw new AppError('bad_request', 'The body does not decode as its Content-Encoding says.', { cause: error });
      }
      throw new AppError('invalid_json', 'The body is not valid JSON.', { cause: error });
    },
  });
  // Not async: a request without a body (most of them) passes on without a promise of its own.
  return function parseJsonBody(ctx: Context, next: Next): Promise<void> {
    if (!METHODS_WITH_BODY.has(ctx.method) || (!ctx.request.length && !ctx.get('Transfer-Encoding'))) {
      return next();
    }
    return parseWithBody(ctx, next);
  };

  async function parseWithBody(ctx: Context, next: Next): Promise<void> {
    if (!ctx.is('application/json')) {
      throw new AppError('unsupported_media_type', 'Request bodies must be application/json.');
    }
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase() || 'identity';
    if (!CONTENT_ENCODINGS.has(encoding)) {
      throw new AppError('unsupported_content_encoding', `Request bodies may be sent as ${ACCEPT_ENCODING} or uncompressed.`, {
        headers: { 'Accept-Encoding': ACCEPT_ENCODING },
      });
    }
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) {
      throw new AppError('request_too_large', `The body exceeds ${limitBytes} bytes.`);
    }
    await parse(ctx, next);
  }
}
