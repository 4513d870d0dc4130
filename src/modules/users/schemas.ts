// Wire shapes of users and billing details: validation, TypeScript types and
// the OpenAPI document all come from these definitions.
import { type Static, Type } from 'typebox';
import { Nullable } from '../../platform/http/schema.ts';

export const UserIdParams = Type.Object({ user_id: Type.String({ description: 'User id (UUID).' }) });

export const CustomProperties = Nullable(
  Type.Object(
    {
      external_id: Type.Optional(
        Nullable(Type.String({ minLength: 1, maxLength: 250, description: 'Your own id for the user; unique among your live users.' })),
      ),
    },
    { additionalProperties: false },
  ),
);

export function userSchemas(locales: string[]) {
  const Locale = Type.String({ enum: locales, description: `Language of the user's invoices and messages (${locales.join(', ')}).` });
  const Email = Nullable(Type.String({ format: 'email', maxLength: 254 }));

  const User = Type.Object(
    {
      id: Type.String({ format: 'uuid' }),
      email: Nullable(Type.String()),
      locale: Type.String(),
      custom_properties: Type.Object({ external_id: Nullable(Type.String()) }),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
    },
    {
      examples: [
        {
          id: '88ca869c-2ffb-46d4-99c6-1aa74ae876cd',
          email: 'ada@example.com',
          locale: locales[0] ?? 'en',
          custom_properties: { external_id: '42' },
          created_at: '2026-03-02T09:14:20.512Z',
          updated_at: '2026-03-02T09:14:20.512Z',
        },
      ],
    },
  );

  const UserCreate = Type.Object(
    {
      email: Type.Optional(Email),
      locale: Type.Optional({ ...Locale, default: locales[0] }),
      custom_properties: Type.Optional(CustomProperties),
    },
    { additionalProperties: false },
  );

  const UserPatch = Type.Object(
    { email: Type.Optional(Email), locale: Type.Optional(Locale), custom_properties: Type.Optional(CustomProperties) },
    { additionalProperties: false },
  );

  return { User, UserCreate, UserPatch };
}

export type UserCreateBody = Static<ReturnType<typeof userSchemas>['UserCreate']>;
export type UserPatchBody = Static<ReturnType<typeof userSchemas>['UserPatch']>;
export type UserView = Static<ReturnType<typeof userSchemas>['User']>;

const name = (max: number) => Type.Optional(Nullable(Type.String({ maxLength: max })));

export const BillingDetailsInput = Type.Object(
  {
    account_type: Type.Optional(Type.String({ enum: ['personal', 'business'], default: 'personal' })),
    first_name: name(150),
    last_name: name(150),
    company_name: name(200),
    vat_number: Type.Optional(Nullable(Type.String({ maxLength: 30, description: 'VAT number with its country prefix, e.g. DE123456789.' }))),
    vat_id: Type.Optional(Nullable(Type.String({ maxLength: 30, description: 'Alias of vat_number (the reference API name).' }))),
    tax_id: name(30),
    line1: name(200),
    postal_code: name(20),
    city: name(100),
    country: Type.Optional(Nullable(Type.String({ minLength: 2, maxLength: 2, description: 'ISO 3166-1 alpha-2 country code.' }))),
  },
  { additionalProperties: false },
);
export type BillingDetailsBody = Static<typeof BillingDetailsInput>;

export const BillingDetails = Type.Object(
  {
    account_type: Type.String({ enum: ['personal', 'business'] }),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    company_name: Nullable(Type.String()),
    vat_number: Nullable(Type.String()),
    vat_id: Nullable(Type.String({ description: 'Same as vat_number (the reference API name).' })),
    tax_id: Nullable(Type.String()),
    line1: Nullable(Type.String()),
    postal_code: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String()),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    examples: [
      {
        account_type: 'personal',
        first_name: 'Ada',
        last_name: 'Lovelace',
        company_name: null,
        vat_number: null,
        vat_id: null,
        tax_id: null,
        line1: 'Example Street 1',
        postal_code: '10115',
        city: 'Berlin',
        country: 'DE',
        updated_at: '2026-03-02T09:14:31.204Z',
      },
    ],
  },
);
export type BillingDetailsView = Static<typeof BillingDetails>;
