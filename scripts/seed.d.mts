// Types of seed.mjs, for the tests that seed the demo organization (test/integration/openapi-examples.test.ts).
export declare const DEMO: {
  organization: { id: string; name: string; slug: string };
  owner: { id: string; email: string; password: string; firstName: string; lastName: string };
  operator: { id: string; email: string; password: string; firstName: string; lastName: string };
  apiKey: { id: string; value: string; name: string };
  widgetKey: { id: string; value: string; name: string };
  desks: Array<{ name: string }>;
  location: { id: string; name: string; address: string; latitude: number; longitude: number; timezone: string };
  service: { id: string; name: string; serviceTypeId: string };
  outcomes: Array<{ code: string; label: string }>;
  queue: { id: string; name: string };
};
export declare function seedSql(at?: number): string;
export declare function ensureDemoQueue(base: string): Promise<{ id: string }>;
export declare function ensureDemoDesks(base: string): Promise<Array<{ id: string; name: string }>>;
export declare const DEMO_API_VERSION: string;
