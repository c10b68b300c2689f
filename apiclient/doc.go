// Package apiclient is a typed client for the staking service interface: all
// thirteen endpoints (analytics, Celestia/Polygon/TON/Solana/Hyperliquid/
// EigenLayer/SSV calls and the unified stake, unstake, withdraw and broadcast
// calls), with the service's JSON names and types.
//
// # Contract
//
//   - Addressing. New takes one base URL that is a prefix of every
//     `/api/v1/...` path. Both published forms work: "https://host" and
//     "https://host/api" (which yields https://host/api/api/v1/...). A test
//     host is just another base URL. The base URL must be http or https with a
//     host and no user info, query or fragment.
//   - Authentication. Every request carries `Authorization: Bearer <token>`
//     (WithToken, or WithTokenFile, read at New and trimmed). With no
//     token, each call returns an error wrapping ErrNoToken and sends
//     nothing. A token file is read again when the last read is older than
//     WithTokenReloadInterval (a minute by default) and when the service
//     answers 401; if it then holds a new token, the refused request is sent
//     once more with the same body bytes under the new token. A file that
//     cannot be read, or holds no valid token, at a reload keeps the current
//     token and is logged. AuthHealthy turns false when a request still ends
//     with 401 after that, and true with the next response that is not a
//     401; AuthFailingSince says since when. No token, old or reloaded,
//     appears in logs or error strings; each is also redacted from any body
//     excerpt or transport error that echoes it.
//   - Validation first. Arguments are checked against the interface's limits
//     before anything is sent (network enum per endpoint, required fields,
//     limit 1..1000, offset 0..10000000 for endpoints 1 and 2 and 0..100000
//     for endpoint 8, amount strings of decimal digits holding a positive
//     integer that fits in 64 bits). A rejected argument is an *ArgumentError
//     naming the field. Zero values of optional query fields are not sent,
//     so the service applies its own defaults (period one month back until
//     now; limit 50).
//   - Errors. An error envelope becomes an *APIError (status, name, code,
//     type, message, validation errors, requestId, timestamp, rate-limit
//     headers). The predicates IsValidation, IsInvalidDelegatorAddress,
//     IsNetworkNotSupported, IsNoToken, IsWrongToken, IsThrottled and
//     IsDelegatorDataFailure match on any error chain; they match the
//     exception name first and use the numeric code only when no name was
//     sent, so InvalidDelegatorAddressException and
//     DataNetworkIsNotIncludedInListException are recognised whether their
//     code is the schema's (115400, 115101) or the published example's
//     (100101). A body that is not the envelope (HTML from a proxy, empty,
//     truncated, or an undecodable result) is an *UnexpectedResponseError
//     keeping the status and a short excerpt. A failure to reach the service
//     is a *TransportError wrapping the cause. APIError and
//     UnexpectedResponseError are Retryable for 429 and 5xx; an APIError is
//     also Retryable for 408 (the service's request timeout) and 409 (a
//     conflict while the service is busy with the same request). Both report
//     RetryAfter from the Retry-After header, seconds or HTTP date, on any
//     status (a 503 as a 429), or from RateLimit-Reset on a 429 without it;
//     IsRetryable and RetryAfterOf do the same on any error chain. The
//     client itself never retries, save that one resend after a 401 when
//     the token file holds a new token.
//   - Request IDs. Every error from a response carries its request ID
//     (RequestIDOf). For successes too, WithResponseInfo makes the client fill
//     a ResponseInfo with the status, x-request-id and rate-limit headers.
//   - Observation. WithObserver sets an Observer told of every call to the
//     service, whatever the endpoint, once per call, with the caller's
//     context: the endpoint (a fixed label such as "stake" or
//     "celestia_send", never the path), the HTTP status, the duration and the
//     error; Call derives the status and exception labels, throttling and the
//     Retry-After delay from it. It never sees the token, headers or bodies.
//     All requests go through one function (do), which tells the observer.
//   - Pagination. DelegatorAPRAll, NetworkAPYAll and SSVRequestsAll are
//     iter.Seq2 iterators that walk limit/offset until a short or empty page,
//     or (endpoint 8) until totalCount is reached.
//   - Time. Every date-time of a result is a DateTime (a time.Time), the one
//     date-time type of this package; queries take time.Time and send RFC
//     3339. Results and the error envelope's timestamp are read in any ISO
//     8601 form services emit (ParseDateTime): RFC 3339 with or without fractional seconds, an offset
//     with or without a colon, a space instead of the 'T', or no zone at all,
//     read as UTC. Any other value fails the call with an
//     *UnexpectedResponseError naming the field and quoting the value.
//
// # Where the interface is silent
//
//   - Endpoint 7's query parameter is not named by the interface; the client
//     sends the comma-separated vote accounts as "voteAccounts" unless
//     WithValidatorStatusParam names another.
//   - Endpoint 7's `statuses` is kept raw (json.RawMessage);
//     ValidatorStatusResult.ParseStatuses reads it as a string, a list or a
//     map, and ParsedStatuses.ForAccounts maps it to the queried accounts.
//   - Celestia's signedTransaction is described as base64 but published as
//     hexadecimal: both are accepted (checked to be one of the two) and sent
//     as given.
//   - The SSV set-up request's four nullable fields (ecdhPublicKey,
//     validatorRegistrationTxs, feeRecipientTx, approveTx) have no documented
//     type: they are json.RawMessage.
//   - The unsigned transaction's amount is documented as an integer and the
//     withdraw extraData.amount has no documented JSON type: both accept an
//     integer number or a string holding one (FlexInt), and a refused value
//     names its field.
//   - Endpoint 4's success payload is not documented: PolygonSend returns
//     the envelope's result as json.RawMessage.
//   - Hyperliquid's amount is a JSON number; it is a json.Number so it is
//     sent exactly as written.
//   - Endpoint 1's reward amounts, net amounts and fees and endpoint 2's APYs
//     are documented as numbers (double): they are json.Number, the decimal
//     text exactly as the service sent it, so no digit is lost to a float64.
//   - The unified interface is specified for chain "solana" only (networks
//     testnet and mainnet-beta); other chains are rejected before sending.
//   - The code of ThrottlerException is not documented: throttling is
//     recognised by name or by status 429. An error code that is not an
//     integer decodes as 0 rather than failing the whole error.
package apiclient
