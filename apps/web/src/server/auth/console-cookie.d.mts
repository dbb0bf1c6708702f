// Types of console-cookie.mjs.
export declare const LOCAL_CONSOLE_COOKIE: string;
export declare function consoleCookieValue(secret: string): string;
