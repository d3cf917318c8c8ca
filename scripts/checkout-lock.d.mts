/** The folder of this checkout's caches (node_modules/.cache). */
export declare const CHECKOUT_CACHE: string;
/** Runs `fn` holding the lock `name` of this checkout (one process at a time). */
export declare function withCheckoutLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
