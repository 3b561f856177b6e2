/** The security headers every answer of the web carries: [name, value] (security-headers.mjs). */
export declare const STATIC_SECURITY_HEADERS: ReadonlyArray<readonly [string, string]>;
