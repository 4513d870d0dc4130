// Generated from the Charging Access OpenAPI document by `npm run sdk:generate` (openapi-typescript). Do not edit: the CI
// check (packages/client/test/generated.test.ts) fails when this file differs from what the API generates.

export interface paths {
    "/api/v1/stations/around/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stations around a point, nearest first */
        get: {
            parameters: {
                query: {
                    /** @description Connector types (repeat the parameter or separate with commas). VENDOR_R/VENDOR_S are accepted for TESLA_R/TESLA_S. */
                    connector_types?: ("CHADEMO" | "DOMESTIC_A" | "DOMESTIC_B" | "DOMESTIC_C" | "DOMESTIC_D" | "DOMESTIC_E" | "DOMESTIC_F" | "DOMESTIC_G" | "DOMESTIC_H" | "DOMESTIC_I" | "DOMESTIC_J" | "DOMESTIC_K" | "DOMESTIC_L" | "IEC_60309_2_single_16" | "IEC_60309_2_three_16" | "IEC_60309_2_three_32" | "IEC_60309_2_three_64" | "IEC_62196_T1" | "IEC_62196_T1_COMBO" | "IEC_62196_T2" | "IEC_62196_T2_COMBO" | "IEC_62196_T3A" | "IEC_62196_T3C" | "TESLA_R" | "TESLA_S" | "VENDOR_R" | "VENDOR_S")[];
                    /** @description Radius in meters (max 100000). */
                    distance?: number;
                    /**
                     * @description Centre of the search.
                     * @example 52.52
                     */
                    latitude: number;
                    /**
                     * @description Centre of the search.
                     * @example 13.405
                     */
                    longitude: number;
                    /** @description Only stations with an AVAILABLE EVSE. */
                    only_available?: boolean;
                    /** @description Only partner operators. */
                    only_partners?: boolean;
                    /** @description Operator names (repeat or comma-separate). */
                    operators?: string[];
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                address: string;
                                amenities: ("HOTEL" | "RESTAURANT" | "CAFE" | "MALL" | "SUPERMARKET" | "SPORT" | "RECREATION_AREA" | "NATURE" | "MUSEUM" | "BUS_STOP" | "TAXI_STAND" | "TRAIN_STATION" | "AIRPORT" | "CARPOOL_PARKING" | "FUEL_STATION" | "WIFI")[];
                                coordinates: {
                                    latitude: string;
                                    longitude: string;
                                };
                                /** @description Meters from the search centre. */
                                distance: number;
                                evses: {
                                    evse_id: string;
                                    status: string;
                                }[];
                                /** Format: uuid */
                                id: string;
                                is_partner: boolean;
                                /** Format: date-time */
                                last_updated: string;
                                /** Format: uri */
                                logo_url?: string;
                                name: string;
                                opening_times: {
                                    regular_hours: {
                                        period_begin: string;
                                        period_end: string;
                                        /** @enum {string} */
                                        weekday: "MONDAY" | "TUESDAY" | "WEDNESDAY" | "THURSDAY" | "FRIDAY" | "SATURDAY" | "SUNDAY" | "ALL";
                                    }[];
                                    twentyfourseven: boolean;
                                };
                                operator: {
                                    contact: {
                                        phone: string | null;
                                    };
                                    name: string;
                                };
                                price_groups: {
                                    currency: string;
                                    evse_ids: string[];
                                    /** @description True when the operator sent no tariff and our configured fallback price applies. */
                                    is_fallback: boolean;
                                    /** Format: date-time */
                                    local_datetime: string;
                                    /** @description kW */
                                    power: number;
                                    /** @description Amount held on the payment method when charging starts. */
                                    pre_authorization_amount: string;
                                    prices: {
                                        /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                        blocking_fee: {
                                            [key: string]: {
                                                blocking_cap: string | null;
                                                /** @description YYYY-MM-DD, or empty when unbounded */
                                                date_from: string;
                                                /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                                date_to: string;
                                                grace_period_minutes: number | null;
                                                /** @description Excl. VAT; time prices per hour. */
                                                gross_price: string;
                                                /** @description VAT percent. */
                                                tax: number;
                                                /** @description HH:MM, local time */
                                                time_from: string;
                                                /** @description HH:MM, local time; 24:00 is the end of the day */
                                                time_to: string;
                                                /** @description Incl. VAT; time prices per minute. */
                                                user_facing_price: string;
                                            }[];
                                        } | null;
                                        /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                        kwh_price: {
                                            [key: string]: {
                                                blocking_cap: string | null;
                                                /** @description YYYY-MM-DD, or empty when unbounded */
                                                date_from: string;
                                                /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                                date_to: string;
                                                grace_period_minutes: number | null;
                                                /** @description Excl. VAT; time prices per hour. */
                                                gross_price: string;
                                                /** @description VAT percent. */
                                                tax: number;
                                                /** @description HH:MM, local time */
                                                time_from: string;
                                                /** @description HH:MM, local time; 24:00 is the end of the day */
                                                time_to: string;
                                                /** @description Incl. VAT; time prices per minute. */
                                                user_facing_price: string;
                                            }[];
                                        } | null;
                                        /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                        session_fee: {
                                            [key: string]: {
                                                blocking_cap: string | null;
                                                /** @description YYYY-MM-DD, or empty when unbounded */
                                                date_from: string;
                                                /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                                date_to: string;
                                                grace_period_minutes: number | null;
                                                /** @description Excl. VAT; time prices per hour. */
                                                gross_price: string;
                                                /** @description VAT percent. */
                                                tax: number;
                                                /** @description HH:MM, local time */
                                                time_from: string;
                                                /** @description HH:MM, local time; 24:00 is the end of the day */
                                                time_to: string;
                                                /** @description Incl. VAT; time prices per minute. */
                                                user_facing_price: string;
                                            }[];
                                        } | null;
                                        /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                        starting_fee: {
                                            [key: string]: {
                                                blocking_cap: string | null;
                                                /** @description YYYY-MM-DD, or empty when unbounded */
                                                date_from: string;
                                                /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                                date_to: string;
                                                grace_period_minutes: number | null;
                                                /** @description Excl. VAT; time prices per hour. */
                                                gross_price: string;
                                                /** @description VAT percent. */
                                                tax: number;
                                                /** @description HH:MM, local time */
                                                time_from: string;
                                                /** @description HH:MM, local time; 24:00 is the end of the day */
                                                time_to: string;
                                                /** @description Incl. VAT; time prices per minute. */
                                                user_facing_price: string;
                                            }[];
                                        } | null;
                                        /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                        time_price: {
                                            [key: string]: {
                                                blocking_cap: string | null;
                                                /** @description YYYY-MM-DD, or empty when unbounded */
                                                date_from: string;
                                                /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                                date_to: string;
                                                grace_period_minutes: number | null;
                                                /** @description Excl. VAT; time prices per hour. */
                                                gross_price: string;
                                                /** @description VAT percent. */
                                                tax: number;
                                                /** @description HH:MM, local time */
                                                time_from: string;
                                                /** @description HH:MM, local time; 24:00 is the end of the day */
                                                time_to: string;
                                                /** @description Incl. VAT; time prices per minute. */
                                                user_facing_price: string;
                                            }[];
                                        } | null;
                                    };
                                    /** @description Connector standard of the group. */
                                    type: string;
                                }[];
                                /** @enum {string} */
                                speed: "slow" | "fast" | "turbo";
                                /** @enum {string} */
                                status: "free" | "busy" | "unknown" | "error";
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stations/details/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One station, by station id or EVSE id */
        get: {
            parameters: {
                query: {
                    /** @example DE*HHC*ESCN*NORMAL */
                    id: string;
                    /**
                     * @description What `id` refers to.
                     * @example evse_id
                     */
                    type: "evse_id" | "station_id";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                         *       "name": "Sandbox scenarios (Helion Highway Charging)",
                         *       "address": "Scenario Street 1, Berlin",
                         *       "coordinates": {
                         *         "latitude": "52.521000",
                         *         "longitude": "13.406000"
                         *       },
                         *       "opening_times": {
                         *         "twentyfourseven": true,
                         *         "regular_hours": []
                         *       },
                         *       "operator": {
                         *         "name": "Helion Highway Charging",
                         *         "contact": {
                         *           "phone": null
                         *         }
                         *       },
                         *       "is_partner": false,
                         *       "evses": [
                         *         {
                         *           "evse_id": "DE*HHC*ESCN*NORMAL",
                         *           "status": "AVAILABLE"
                         *         },
                         *         {
                         *           "evse_id": "DE*HHC*ESCN*REJECT",
                         *           "status": "AVAILABLE"
                         *         }
                         *       ],
                         *       "last_updated": "2026-03-02T08:00:00.000Z",
                         *       "speed": "fast",
                         *       "status": "free",
                         *       "amenities": [],
                         *       "price_groups": [
                         *         {
                         *           "type": "IEC_62196_T2_COMBO",
                         *           "power": 50,
                         *           "evse_ids": [
                         *             "DE*HHC*ESCN*NORMAL",
                         *             "DE*HHC*ESCN*REJECT"
                         *           ],
                         *           "prices": {
                         *             "time_price": {
                         *               "ALL": [
                         *                 {
                         *                   "time_from": "00:00",
                         *                   "time_to": "24:00",
                         *                   "date_from": "",
                         *                   "date_to": "",
                         *                   "gross_price": "1.20",
                         *                   "user_facing_price": "0.0238",
                         *                   "tax": 19,
                         *                   "grace_period_minutes": null,
                         *                   "blocking_cap": null
                         *                 }
                         *               ]
                         *             },
                         *             "kwh_price": {
                         *               "ALL": [
                         *                 {
                         *                   "time_from": "00:00",
                         *                   "time_to": "24:00",
                         *                   "date_from": "",
                         *                   "date_to": "",
                         *                   "gross_price": "0.45",
                         *                   "user_facing_price": "0.54",
                         *                   "tax": 19,
                         *                   "grace_period_minutes": null,
                         *                   "blocking_cap": null
                         *                 }
                         *               ]
                         *             },
                         *             "blocking_fee": null,
                         *             "session_fee": {
                         *               "ALL": [
                         *                 {
                         *                   "time_from": "00:00",
                         *                   "time_to": "24:00",
                         *                   "date_from": "",
                         *                   "date_to": "",
                         *                   "gross_price": "0.50",
                         *                   "user_facing_price": "0.60",
                         *                   "tax": 19,
                         *                   "grace_period_minutes": null,
                         *                   "blocking_cap": null
                         *                 }
                         *               ]
                         *             },
                         *             "starting_fee": null
                         *           },
                         *           "currency": "EUR",
                         *           "pre_authorization_amount": "29.00",
                         *           "is_fallback": false,
                         *           "local_datetime": "2026-03-02T10:15:04+01:00"
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            address: string;
                            amenities: ("HOTEL" | "RESTAURANT" | "CAFE" | "MALL" | "SUPERMARKET" | "SPORT" | "RECREATION_AREA" | "NATURE" | "MUSEUM" | "BUS_STOP" | "TAXI_STAND" | "TRAIN_STATION" | "AIRPORT" | "CARPOOL_PARKING" | "FUEL_STATION" | "WIFI")[];
                            coordinates: {
                                latitude: string;
                                longitude: string;
                            };
                            evses: {
                                evse_id: string;
                                status: string;
                            }[];
                            /** Format: uuid */
                            id: string;
                            is_partner: boolean;
                            /** Format: date-time */
                            last_updated: string;
                            /** Format: uri */
                            logo_url?: string;
                            name: string;
                            opening_times: {
                                regular_hours: {
                                    period_begin: string;
                                    period_end: string;
                                    /** @enum {string} */
                                    weekday: "MONDAY" | "TUESDAY" | "WEDNESDAY" | "THURSDAY" | "FRIDAY" | "SATURDAY" | "SUNDAY" | "ALL";
                                }[];
                                twentyfourseven: boolean;
                            };
                            operator: {
                                contact: {
                                    phone: string | null;
                                };
                                name: string;
                            };
                            price_groups: {
                                currency: string;
                                evse_ids: string[];
                                /** @description True when the operator sent no tariff and our configured fallback price applies. */
                                is_fallback: boolean;
                                /** Format: date-time */
                                local_datetime: string;
                                /** @description kW */
                                power: number;
                                /** @description Amount held on the payment method when charging starts. */
                                pre_authorization_amount: string;
                                prices: {
                                    /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                    blocking_fee: {
                                        [key: string]: {
                                            blocking_cap: string | null;
                                            /** @description YYYY-MM-DD, or empty when unbounded */
                                            date_from: string;
                                            /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                            date_to: string;
                                            grace_period_minutes: number | null;
                                            /** @description Excl. VAT; time prices per hour. */
                                            gross_price: string;
                                            /** @description VAT percent. */
                                            tax: number;
                                            /** @description HH:MM, local time */
                                            time_from: string;
                                            /** @description HH:MM, local time; 24:00 is the end of the day */
                                            time_to: string;
                                            /** @description Incl. VAT; time prices per minute. */
                                            user_facing_price: string;
                                        }[];
                                    } | null;
                                    /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                    kwh_price: {
                                        [key: string]: {
                                            blocking_cap: string | null;
                                            /** @description YYYY-MM-DD, or empty when unbounded */
                                            date_from: string;
                                            /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                            date_to: string;
                                            grace_period_minutes: number | null;
                                            /** @description Excl. VAT; time prices per hour. */
                                            gross_price: string;
                                            /** @description VAT percent. */
                                            tax: number;
                                            /** @description HH:MM, local time */
                                            time_from: string;
                                            /** @description HH:MM, local time; 24:00 is the end of the day */
                                            time_to: string;
                                            /** @description Incl. VAT; time prices per minute. */
                                            user_facing_price: string;
                                        }[];
                                    } | null;
                                    /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                    session_fee: {
                                        [key: string]: {
                                            blocking_cap: string | null;
                                            /** @description YYYY-MM-DD, or empty when unbounded */
                                            date_from: string;
                                            /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                            date_to: string;
                                            grace_period_minutes: number | null;
                                            /** @description Excl. VAT; time prices per hour. */
                                            gross_price: string;
                                            /** @description VAT percent. */
                                            tax: number;
                                            /** @description HH:MM, local time */
                                            time_from: string;
                                            /** @description HH:MM, local time; 24:00 is the end of the day */
                                            time_to: string;
                                            /** @description Incl. VAT; time prices per minute. */
                                            user_facing_price: string;
                                        }[];
                                    } | null;
                                    /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                    starting_fee: {
                                        [key: string]: {
                                            blocking_cap: string | null;
                                            /** @description YYYY-MM-DD, or empty when unbounded */
                                            date_from: string;
                                            /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                            date_to: string;
                                            grace_period_minutes: number | null;
                                            /** @description Excl. VAT; time prices per hour. */
                                            gross_price: string;
                                            /** @description VAT percent. */
                                            tax: number;
                                            /** @description HH:MM, local time */
                                            time_from: string;
                                            /** @description HH:MM, local time; 24:00 is the end of the day */
                                            time_to: string;
                                            /** @description Incl. VAT; time prices per minute. */
                                            user_facing_price: string;
                                        }[];
                                    } | null;
                                    /** @description Keyed by weekday (or ALL); items in the tariff order of precedence. */
                                    time_price: {
                                        [key: string]: {
                                            blocking_cap: string | null;
                                            /** @description YYYY-MM-DD, or empty when unbounded */
                                            date_from: string;
                                            /** @description YYYY-MM-DD (exclusive), or empty when unbounded */
                                            date_to: string;
                                            grace_period_minutes: number | null;
                                            /** @description Excl. VAT; time prices per hour. */
                                            gross_price: string;
                                            /** @description VAT percent. */
                                            tax: number;
                                            /** @description HH:MM, local time */
                                            time_from: string;
                                            /** @description HH:MM, local time; 24:00 is the end of the day */
                                            time_to: string;
                                            /** @description Incl. VAT; time prices per minute. */
                                            user_facing_price: string;
                                        }[];
                                    } | null;
                                };
                                /** @description Connector standard of the group. */
                                type: string;
                            }[];
                            /** @enum {string} */
                            speed: "slow" | "fast" | "turbo";
                            /** @enum {string} */
                            status: "free" | "busy" | "unknown" | "error";
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stations/partners/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Partner operators, for filtering
         * @description A plain array (not paginated).
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: uri */
                            logo_url: string | null;
                            name: string;
                        }[];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/stations/tile/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Map tiles: clusters and single stations as one GeoJSON FeatureCollection
         * @description Tiles are slippy-map tiles (x, y at zoom z); send several by repeating x and y (paired by position). A cluster at zoom z holds the matching stations of one quarter-by-quarter cell of a tile; its expansion_zoom is the zoom at which it splits. Clusters nest across zooms, adjacent tiles never share a station, and the counts of a tile add up to its matching stations. Tiles are cached for about 2 s.
         */
        get: {
            parameters: {
                query: {
                    /** @description Connector types (repeat the parameter or separate with commas). VENDOR_R/VENDOR_S are accepted for TESLA_R/TESLA_S. */
                    connector_types?: ("CHADEMO" | "DOMESTIC_A" | "DOMESTIC_B" | "DOMESTIC_C" | "DOMESTIC_D" | "DOMESTIC_E" | "DOMESTIC_F" | "DOMESTIC_G" | "DOMESTIC_H" | "DOMESTIC_I" | "DOMESTIC_J" | "DOMESTIC_K" | "DOMESTIC_L" | "IEC_60309_2_single_16" | "IEC_60309_2_three_16" | "IEC_60309_2_three_32" | "IEC_60309_2_three_64" | "IEC_62196_T1" | "IEC_62196_T1_COMBO" | "IEC_62196_T2" | "IEC_62196_T2_COMBO" | "IEC_62196_T3A" | "IEC_62196_T3C" | "TESLA_R" | "TESLA_S" | "VENDOR_R" | "VENDOR_S")[];
                    /** @description Leave out stations whose price (in their own currency, incl. VAT) is above this. */
                    max_price?: number;
                    only_available?: boolean;
                    only_partners?: boolean;
                    operators?: string[];
                    /** @description Speeds to show. */
                    power_groups?: ("slow" | "fast" | "turbo")[];
                    /**
                     * @description Tile X coordinates (each below 2^z).
                     * @example [
                     *       34
                     *     ]
                     */
                    x: number[];
                    /**
                     * @description Tile Y coordinates, paired with x (each below 2^z).
                     * @example [
                     *       21
                     *     ]
                     */
                    y: number[];
                    /**
                     * @description Zoom level.
                     * @example 6
                     */
                    z: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "type": "FeatureCollection",
                         *       "features": [
                         *         {
                         *           "type": "Feature",
                         *           "geometry": {
                         *             "type": "Point",
                         *             "coordinates": [
                         *               "13.379193",
                         *               "52.534423"
                         *             ]
                         *           },
                         *           "properties": {
                         *             "count": 2,
                         *             "expansion_zoom": 7,
                         *             "speed": "turbo",
                         *             "status": "free"
                         *           },
                         *           "cluster_id": "6/1572"
                         *         },
                         *         {
                         *           "type": "Feature",
                         *           "geometry": {
                         *             "type": "Point",
                         *             "coordinates": [
                         *               "13.406000",
                         *               "52.521000"
                         *             ]
                         *           },
                         *           "properties": {
                         *             "count": 1,
                         *             "speed": "fast",
                         *             "status": "free",
                         *             "operator_id": "DE*HHC"
                         *           },
                         *           "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                         *           "custom_properties": {
                         *             "is_partner": false
                         *           },
                         *           "price_properties": {
                         *             "price": "0.54",
                         *             "type": "charging_price",
                         *             "currency": "EUR"
                         *           }
                         *         }
                         *       ]
                         *     }
                         */
                        "application/json": {
                            features: {
                                /** @description Cluster features only. */
                                cluster_id?: string;
                                custom_properties?: {
                                    is_partner: boolean;
                                };
                                geometry: {
                                    /** @description [longitude, latitude] as strings */
                                    coordinates: string[];
                                    /** @enum {string} */
                                    type: "Point";
                                };
                                price_properties?: {
                                    currency: string;
                                    /** @description Incl. VAT: per kWh (charging_price) or per minute (time_price). */
                                    price: string;
                                    /** @enum {string} */
                                    type: "charging_price" | "time_price";
                                };
                                properties: {
                                    /** @description Stations in the feature: 1 for a station, more for a cluster. */
                                    count: number;
                                    /** @description Clusters only: the zoom at which the cluster splits. */
                                    expansion_zoom?: number;
                                    /** @description Stations only: the operator (CPO party) id. */
                                    operator_id?: string;
                                    /** @enum {string} */
                                    speed: "slow" | "fast" | "turbo";
                                    /** @enum {string} */
                                    status: "free" | "busy" | "unknown" | "error";
                                };
                                /** @description Single-station features only. */
                                station_id?: string;
                                /** @enum {string} */
                                type: "Feature";
                            }[];
                            /** @enum {string} */
                            type: "FeatureCollection";
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users, newest first */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                    /** @description Exact match on the user id or custom_properties.external_id. */
                    search?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                /** Format: date-time */
                                created_at: string;
                                custom_properties: {
                                    external_id: string | null;
                                };
                                email: string | null;
                                /** Format: uuid */
                                id: string;
                                locale: string;
                                /** Format: date-time */
                                updated_at: string;
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        /** Create a user */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        custom_properties?: {
                            /** @description Your own id for the user; unique among your live users. */
                            external_id?: string | null;
                        } | null;
                        /** Format: email */
                        email?: string | null;
                        /**
                         * @description Language of the user's invoices and messages (en, de).
                         * @default en
                         * @enum {string}
                         */
                        locale?: "en" | "de";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "88ca869c-2ffb-46d4-99c6-1aa74ae876cd",
                         *       "email": "ada@example.com",
                         *       "locale": "en",
                         *       "custom_properties": {
                         *         "external_id": "42"
                         *       },
                         *       "created_at": "2026-03-02T09:14:20.512Z",
                         *       "updated_at": "2026-03-02T09:14:20.512Z"
                         *     }
                         */
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            custom_properties: {
                                external_id: string | null;
                            };
                            email: string | null;
                            /** Format: uuid */
                            id: string;
                            locale: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a user */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "88ca869c-2ffb-46d4-99c6-1aa74ae876cd",
                         *       "email": "ada@example.com",
                         *       "locale": "en",
                         *       "custom_properties": {
                         *         "external_id": "42"
                         *       },
                         *       "created_at": "2026-03-02T09:14:20.512Z",
                         *       "updated_at": "2026-03-02T09:14:20.512Z"
                         *     }
                         */
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            custom_properties: {
                                external_id: string | null;
                            };
                            email: string | null;
                            /** Format: uuid */
                            id: string;
                            locale: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /**
         * Delete a user (soft)
         * @description The user is marked deleted and answers 404 from then on; its data is retained for compliance.
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Payment required (payment_error, pre_authorization_failed). */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Update a user
         * @description Only the fields sent change. `custom_properties: null` clears the external id.
         */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        custom_properties?: {
                            /** @description Your own id for the user; unique among your live users. */
                            external_id?: string | null;
                        } | null;
                        /** Format: email */
                        email?: string | null;
                        /**
                         * @description Language of the user's invoices and messages (en, de).
                         * @enum {string}
                         */
                        locale?: "en" | "de";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "88ca869c-2ffb-46d4-99c6-1aa74ae876cd",
                         *       "email": "ada@example.com",
                         *       "locale": "en",
                         *       "custom_properties": {
                         *         "external_id": "42"
                         *       },
                         *       "created_at": "2026-03-02T09:14:20.512Z",
                         *       "updated_at": "2026-03-02T09:14:20.512Z"
                         *     }
                         */
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            custom_properties: {
                                external_id: string | null;
                            };
                            email: string | null;
                            /** Format: uuid */
                            id: string;
                            locale: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/users/{user_id}/billing-details/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get billing details
         * @description A user who never had billing details set answers the defaults (personal account, every field null).
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "account_type": "personal",
                         *       "first_name": "Ada",
                         *       "last_name": "Lovelace",
                         *       "company_name": null,
                         *       "vat_number": null,
                         *       "vat_id": null,
                         *       "tax_id": null,
                         *       "line1": "Example Street 1",
                         *       "postal_code": "10115",
                         *       "city": "Berlin",
                         *       "country": "DE",
                         *       "updated_at": "2026-03-02T09:14:31.204Z"
                         *     }
                         */
                        "application/json": {
                            /** @enum {string} */
                            account_type: "personal" | "business";
                            city: string | null;
                            company_name: string | null;
                            country: string | null;
                            first_name: string | null;
                            last_name: string | null;
                            line1: string | null;
                            postal_code: string | null;
                            tax_id: string | null;
                            /** Format: date-time */
                            updated_at: string | null;
                            /** @description Same as vat_number (the reference API name). */
                            vat_id: string | null;
                            vat_number: string | null;
                        };
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        /**
         * Replace billing details
         * @description Replaces all billing details (fields not sent become null). Formats are checked here (VAT number by its country prefix, ISO country code); completeness is checked when charging starts: personal accounts need first_name, last_name and country, business accounts company_name, vat_number and country.
         */
        put: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /**
                         * @default personal
                         * @enum {string}
                         */
                        account_type?: "personal" | "business";
                        city?: string | null;
                        company_name?: string | null;
                        /** @description ISO 3166-1 alpha-2 country code. */
                        country?: string | null;
                        first_name?: string | null;
                        last_name?: string | null;
                        line1?: string | null;
                        postal_code?: string | null;
                        tax_id?: string | null;
                        /** @description Alias of vat_number (the reference API name). */
                        vat_id?: string | null;
                        /** @description VAT number with its country prefix, e.g. DE123456789. */
                        vat_number?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "account_type": "personal",
                         *       "first_name": "Ada",
                         *       "last_name": "Lovelace",
                         *       "company_name": null,
                         *       "vat_number": null,
                         *       "vat_id": null,
                         *       "tax_id": null,
                         *       "line1": "Example Street 1",
                         *       "postal_code": "10115",
                         *       "city": "Berlin",
                         *       "country": "DE",
                         *       "updated_at": "2026-03-02T09:14:31.204Z"
                         *     }
                         */
                        "application/json": {
                            /** @enum {string} */
                            account_type: "personal" | "business";
                            city: string | null;
                            company_name: string | null;
                            country: string | null;
                            first_name: string | null;
                            last_name: string | null;
                            line1: string | null;
                            postal_code: string | null;
                            tax_id: string | null;
                            /** Format: date-time */
                            updated_at: string | null;
                            /** @description Same as vat_number (the reference API name). */
                            vat_id: string | null;
                            vat_number: string | null;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging-sessions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List charging sessions, newest first */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                    status?: "pending" | "active" | "stopping" | "completed" | "failed";
                };
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging-sessions/{session_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A charging session */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    session_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                         *       "status": "active",
                         *       "is_active": true,
                         *       "start_time": "2026-03-02T09:15:06.287Z",
                         *       "end_time": null,
                         *       "duration": 58,
                         *       "consumed_energy": "9.683",
                         *       "evse_id": "DE*HHC*ESCN*NORMAL",
                         *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                         *       "station_info": {
                         *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                         *         "station_address": "Scenario Street 1, Berlin",
                         *         "country": "DEU",
                         *         "station_speed": "fast",
                         *         "connector_standard": "IEC_62196_T2_COMBO",
                         *         "connector_power": 50,
                         *         "support_phone": null,
                         *         "latitude": "52.521000",
                         *         "longitude": "13.406000"
                         *       },
                         *       "is_partner": false,
                         *       "logo_url": null,
                         *       "user_facing_session_prices": {
                         *         "kwh_price": "0.54",
                         *         "time_price": "0.0238",
                         *         "session_fee": "0.60",
                         *         "blocking_fee": null,
                         *         "starting_fee": null,
                         *         "grace_period_minutes": null,
                         *         "blocking_cap": null,
                         *         "currency": "EUR"
                         *       },
                         *       "session_cost": {
                         *         "kwh_cost": null,
                         *         "time_cost": null,
                         *         "session_fee_cost": null,
                         *         "blocking_fee_cost": null,
                         *         "starting_fee_cost": null,
                         *         "invoice_download": null,
                         *         "invoice_vat": "0.00",
                         *         "invoice_summary": "0.00",
                         *         "invoice_credits": "0.00",
                         *         "invoice_discount": "0.00",
                         *         "currency": "EUR"
                         *       },
                         *       "estimated_cost": "5.80",
                         *       "pre_authorization": {
                         *         "amount": "29.00",
                         *         "currency": "EUR",
                         *         "status": "authorized"
                         *       },
                         *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                         *       "failure_reason": null,
                         *       "rates": null,
                         *       "created_at": "2026-03-02T09:15:05.158Z",
                         *       "updated_at": "2026-03-02T09:16:04.420Z",
                         *       "version": 13
                         *     }
                         */
                        "application/json": {
                            /** @description kWh, 3 decimals. */
                            consumed_energy: string;
                            /** Format: date-time */
                            created_at: string;
                            /** @description Seconds since the start (to the end once ended). */
                            duration: number | null;
                            /** Format: date-time */
                            end_time: string | null;
                            /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                            estimated_cost: string | null;
                            evse_id: string;
                            failure_reason: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description True while pending, active or stopping. */
                            is_active: boolean;
                            is_partner: boolean;
                            logo_url: string | null;
                            payment_method_id: string;
                            pre_authorization: {
                                /** @description Amount held on the payment method. */
                                amount: string;
                                currency: string;
                                /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                status: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                 */
                                transferred_from?: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                 */
                                transferred_to?: string;
                            };
                            rates: number | null;
                            session_cost: {
                                /** @description Parking (blocking) part, incl. VAT. */
                                blocking_fee_cost: string | null;
                                currency: string;
                                /** @description Credits applied (always 0.00: there are no credits yet). */
                                invoice_credits: string;
                                /** @description Discount applied (always 0.00: there are no discounts yet). */
                                invoice_discount: string;
                                /**
                                 * Format: uri
                                 * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                 */
                                invoice_download: string | null;
                                /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                invoice_summary: string;
                                /** @description VAT of the invoice. */
                                invoice_vat: string;
                                /** @description Energy part of the cost, incl. VAT. */
                                kwh_cost: string | null;
                                /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                session_fee_cost: string | null;
                                /** @description Our starting fee, incl. VAT. */
                                starting_fee_cost: string | null;
                                /** @description Charging-time part, incl. VAT. */
                                time_cost: string | null;
                            };
                            /** Format: date-time */
                            start_time: string | null;
                            station_id: string;
                            station_info: {
                                /** @description kW */
                                connector_power: number | null;
                                connector_standard: string | null;
                                /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                country: string | null;
                                latitude: string | null;
                                longitude: string | null;
                                station_address: string | null;
                                station_name: string | null;
                                /** @description slow, fast or turbo */
                                station_speed: string | null;
                                support_phone: string | null;
                            };
                            /**
                             * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                             * @enum {string}
                             */
                            status: "pending" | "active" | "stopping" | "completed" | "failed";
                            /** Format: date-time */
                            updated_at: string;
                            user_facing_session_prices: {
                                /** @description Most blocking fees per session. */
                                blocking_cap: string | null;
                                /** @description Per minute of parking (blocking) incl. VAT. */
                                blocking_fee: string | null;
                                currency: string;
                                grace_period_minutes: number | null;
                                /** @description Per kWh incl. VAT at the start. */
                                kwh_price: string | null;
                                /** @description One-off fee of the operator incl. VAT. */
                                session_fee: string | null;
                                /** @description Our one-off fee incl. VAT. */
                                starting_fee: string | null;
                                /** @description Per minute of charging incl. VAT at the start. */
                                time_price: string | null;
                            };
                            /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                            version: number;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Rate a charging session */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    session_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        rates: number | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                         *       "status": "active",
                         *       "is_active": true,
                         *       "start_time": "2026-03-02T09:15:06.287Z",
                         *       "end_time": null,
                         *       "duration": 58,
                         *       "consumed_energy": "9.683",
                         *       "evse_id": "DE*HHC*ESCN*NORMAL",
                         *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                         *       "station_info": {
                         *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                         *         "station_address": "Scenario Street 1, Berlin",
                         *         "country": "DEU",
                         *         "station_speed": "fast",
                         *         "connector_standard": "IEC_62196_T2_COMBO",
                         *         "connector_power": 50,
                         *         "support_phone": null,
                         *         "latitude": "52.521000",
                         *         "longitude": "13.406000"
                         *       },
                         *       "is_partner": false,
                         *       "logo_url": null,
                         *       "user_facing_session_prices": {
                         *         "kwh_price": "0.54",
                         *         "time_price": "0.0238",
                         *         "session_fee": "0.60",
                         *         "blocking_fee": null,
                         *         "starting_fee": null,
                         *         "grace_period_minutes": null,
                         *         "blocking_cap": null,
                         *         "currency": "EUR"
                         *       },
                         *       "session_cost": {
                         *         "kwh_cost": null,
                         *         "time_cost": null,
                         *         "session_fee_cost": null,
                         *         "blocking_fee_cost": null,
                         *         "starting_fee_cost": null,
                         *         "invoice_download": null,
                         *         "invoice_vat": "0.00",
                         *         "invoice_summary": "0.00",
                         *         "invoice_credits": "0.00",
                         *         "invoice_discount": "0.00",
                         *         "currency": "EUR"
                         *       },
                         *       "estimated_cost": "5.80",
                         *       "pre_authorization": {
                         *         "amount": "29.00",
                         *         "currency": "EUR",
                         *         "status": "authorized"
                         *       },
                         *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                         *       "failure_reason": null,
                         *       "rates": null,
                         *       "created_at": "2026-03-02T09:15:05.158Z",
                         *       "updated_at": "2026-03-02T09:16:04.420Z",
                         *       "version": 13
                         *     }
                         */
                        "application/json": {
                            /** @description kWh, 3 decimals. */
                            consumed_energy: string;
                            /** Format: date-time */
                            created_at: string;
                            /** @description Seconds since the start (to the end once ended). */
                            duration: number | null;
                            /** Format: date-time */
                            end_time: string | null;
                            /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                            estimated_cost: string | null;
                            evse_id: string;
                            failure_reason: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description True while pending, active or stopping. */
                            is_active: boolean;
                            is_partner: boolean;
                            logo_url: string | null;
                            payment_method_id: string;
                            pre_authorization: {
                                /** @description Amount held on the payment method. */
                                amount: string;
                                currency: string;
                                /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                status: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                 */
                                transferred_from?: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                 */
                                transferred_to?: string;
                            };
                            rates: number | null;
                            session_cost: {
                                /** @description Parking (blocking) part, incl. VAT. */
                                blocking_fee_cost: string | null;
                                currency: string;
                                /** @description Credits applied (always 0.00: there are no credits yet). */
                                invoice_credits: string;
                                /** @description Discount applied (always 0.00: there are no discounts yet). */
                                invoice_discount: string;
                                /**
                                 * Format: uri
                                 * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                 */
                                invoice_download: string | null;
                                /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                invoice_summary: string;
                                /** @description VAT of the invoice. */
                                invoice_vat: string;
                                /** @description Energy part of the cost, incl. VAT. */
                                kwh_cost: string | null;
                                /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                session_fee_cost: string | null;
                                /** @description Our starting fee, incl. VAT. */
                                starting_fee_cost: string | null;
                                /** @description Charging-time part, incl. VAT. */
                                time_cost: string | null;
                            };
                            /** Format: date-time */
                            start_time: string | null;
                            station_id: string;
                            station_info: {
                                /** @description kW */
                                connector_power: number | null;
                                connector_standard: string | null;
                                /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                country: string | null;
                                latitude: string | null;
                                longitude: string | null;
                                station_address: string | null;
                                station_name: string | null;
                                /** @description slow, fast or turbo */
                                station_speed: string | null;
                                support_phone: string | null;
                            };
                            /**
                             * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                             * @enum {string}
                             */
                            status: "pending" | "active" | "stopping" | "completed" | "failed";
                            /** Format: date-time */
                            updated_at: string;
                            user_facing_session_prices: {
                                /** @description Most blocking fees per session. */
                                blocking_cap: string | null;
                                /** @description Per minute of parking (blocking) incl. VAT. */
                                blocking_fee: string | null;
                                currency: string;
                                grace_period_minutes: number | null;
                                /** @description Per kWh incl. VAT at the start. */
                                kwh_price: string | null;
                                /** @description One-off fee of the operator incl. VAT. */
                                session_fee: string | null;
                                /** @description Our one-off fee incl. VAT. */
                                starting_fee: string | null;
                                /** @description Per minute of charging incl. VAT at the start. */
                                time_price: string | null;
                            };
                            /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                            version: number;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging-sessions/{session_id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live events of a charging session (Server-Sent Events)
         * @description The session’s client events as Server-Sent Events: on connect, every event of the session so far (or those after `Last-Event-ID` when the header is sent: a reconnecting EventSource sends it by itself), then each new one as it happens, in order: charging_session.pending, .active, .stopping, .completed or .failed (one per status change), charging_session.progress (at most one per EVENTS_PROGRESS_INTERVAL_MS while charging), invoice.created, debt.created and debt.paid. The session in an event carries its `version`. A comment line `: keep-alive` comes every SSE_HEARTBEAT_MS. The stream stays open until the client closes it (or the service stops; reconnect with Last-Event-ID). A client that reads nothing while more than 1 MiB waits for it for a whole heartbeat interval is cut off with a clean end: it reconnects with Last-Event-ID and misses nothing. 400 for a malformed Last-Event-ID; 404 as for the session itself; 429 rate_limited beyond SSE_MAX_STREAMS_PER_CLIENT open streams of the client on one instance.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Resume after this event id (the `id:` of the last event received). */
                    "last-event-id"?: string;
                };
                path: {
                    session_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Server-Sent Events. Each event: `id: <sequence number>`, `event: <type>` and `data: <the event body>` (JSON, the very bytes a webhook of it carries: `{id, type, created_at, data: {object}, user_id}`); comment lines (`: keep-alive`) at the heartbeat interval. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Too many requests (rate_limited); see Retry-After. */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging/debts/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Unpaid charging debts
         * @description Final charges that failed. Pay one by confirming its payment_intent_client_secret with the processor’s SDK; it then disappears from this list. While a debt is unpaid the user cannot start charging (402 payment_error).
         */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                /** @description Amount owed. */
                                amount: string;
                                currency: string;
                                /** @description Confirm the payment with the processor’s SDK; paying clears the debt. */
                                payment_intent_client_secret: string;
                                /** Format: uuid */
                                session_id: string;
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging/start/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start charging
         * @description Checks the user (billing details, no unpaid debt), the payment method and the EVSE (AVAILABLE), holds the price group’s pre_authorization_amount on the payment method, and asks the operator to start. Answers 201 with the session (status pending) once the operator accepted; the session becomes active when charging begins. 402 pre_authorization_failed with payment_intent_client_secret when the bank wants the customer to authenticate: confirm it with the processor’s SDK, then start again (the authenticated hold is used). 424 charging_provider_error when the operator refused or could not be reached (the hold is released). With an Idempotency-Key, the request holds a database connection until the operator answered.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        evse_id: string;
                        payment_method_id: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                         *       "status": "pending",
                         *       "is_active": true,
                         *       "start_time": null,
                         *       "end_time": null,
                         *       "duration": null,
                         *       "consumed_energy": "0.000",
                         *       "evse_id": "DE*HHC*ESCN*NORMAL",
                         *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                         *       "station_info": {
                         *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                         *         "station_address": "Scenario Street 1, Berlin",
                         *         "country": "DEU",
                         *         "station_speed": "fast",
                         *         "connector_standard": "IEC_62196_T2_COMBO",
                         *         "connector_power": 50,
                         *         "support_phone": null,
                         *         "latitude": "52.521000",
                         *         "longitude": "13.406000"
                         *       },
                         *       "is_partner": false,
                         *       "logo_url": null,
                         *       "user_facing_session_prices": {
                         *         "kwh_price": "0.54",
                         *         "time_price": "0.0238",
                         *         "session_fee": "0.60",
                         *         "blocking_fee": null,
                         *         "starting_fee": null,
                         *         "grace_period_minutes": null,
                         *         "blocking_cap": null,
                         *         "currency": "EUR"
                         *       },
                         *       "session_cost": {
                         *         "kwh_cost": null,
                         *         "time_cost": null,
                         *         "session_fee_cost": null,
                         *         "blocking_fee_cost": null,
                         *         "starting_fee_cost": null,
                         *         "invoice_download": null,
                         *         "invoice_vat": "0.00",
                         *         "invoice_summary": "0.00",
                         *         "invoice_credits": "0.00",
                         *         "invoice_discount": "0.00",
                         *         "currency": "EUR"
                         *       },
                         *       "estimated_cost": null,
                         *       "pre_authorization": {
                         *         "amount": "29.00",
                         *         "currency": "EUR",
                         *         "status": "authorized"
                         *       },
                         *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                         *       "failure_reason": null,
                         *       "rates": null,
                         *       "created_at": "2026-03-02T09:15:05.158Z",
                         *       "updated_at": "2026-03-02T09:15:05.158Z",
                         *       "version": 4
                         *     }
                         */
                        "application/json": {
                            /** @description kWh, 3 decimals. */
                            consumed_energy: string;
                            /** Format: date-time */
                            created_at: string;
                            /** @description Seconds since the start (to the end once ended). */
                            duration: number | null;
                            /** Format: date-time */
                            end_time: string | null;
                            /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                            estimated_cost: string | null;
                            evse_id: string;
                            failure_reason: string | null;
                            /** Format: uuid */
                            id: string;
                            /** @description True while pending, active or stopping. */
                            is_active: boolean;
                            is_partner: boolean;
                            logo_url: string | null;
                            payment_method_id: string;
                            pre_authorization: {
                                /** @description Amount held on the payment method. */
                                amount: string;
                                currency: string;
                                /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                status: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                 */
                                transferred_from?: string;
                                /**
                                 * Format: uuid
                                 * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                 */
                                transferred_to?: string;
                            };
                            rates: number | null;
                            session_cost: {
                                /** @description Parking (blocking) part, incl. VAT. */
                                blocking_fee_cost: string | null;
                                currency: string;
                                /** @description Credits applied (always 0.00: there are no credits yet). */
                                invoice_credits: string;
                                /** @description Discount applied (always 0.00: there are no discounts yet). */
                                invoice_discount: string;
                                /**
                                 * Format: uri
                                 * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                 */
                                invoice_download: string | null;
                                /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                invoice_summary: string;
                                /** @description VAT of the invoice. */
                                invoice_vat: string;
                                /** @description Energy part of the cost, incl. VAT. */
                                kwh_cost: string | null;
                                /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                session_fee_cost: string | null;
                                /** @description Our starting fee, incl. VAT. */
                                starting_fee_cost: string | null;
                                /** @description Charging-time part, incl. VAT. */
                                time_cost: string | null;
                            };
                            /** Format: date-time */
                            start_time: string | null;
                            station_id: string;
                            station_info: {
                                /** @description kW */
                                connector_power: number | null;
                                connector_standard: string | null;
                                /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                country: string | null;
                                latitude: string | null;
                                longitude: string | null;
                                station_address: string | null;
                                station_name: string | null;
                                /** @description slow, fast or turbo */
                                station_speed: string | null;
                                support_phone: string | null;
                            };
                            /**
                             * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                             * @enum {string}
                             */
                            status: "pending" | "active" | "stopping" | "completed" | "failed";
                            /** Format: date-time */
                            updated_at: string;
                            user_facing_session_prices: {
                                /** @description Most blocking fees per session. */
                                blocking_cap: string | null;
                                /** @description Per minute of parking (blocking) incl. VAT. */
                                blocking_fee: string | null;
                                currency: string;
                                grace_period_minutes: number | null;
                                /** @description Per kWh incl. VAT at the start. */
                                kwh_price: string | null;
                                /** @description One-off fee of the operator incl. VAT. */
                                session_fee: string | null;
                                /** @description Our one-off fee incl. VAT. */
                                starting_fee: string | null;
                                /** @description Per minute of charging incl. VAT at the start. */
                                time_price: string | null;
                            };
                            /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                            version: number;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Payment required (payment_error, pre_authorization_failed). */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description The charge point operator refused or did not answer, or the station data could not be obtained. */
                424: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/charging/stop/{session_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stop charging
         * @description Asks the operator to stop; 204 once it accepted (the session is then stopping until the CDR arrives). A second stop of a stopping session is 204; a completed or failed one is 409 already_stopped. 409 conflict (Retry-After) while the operator has not reported the session yet.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    session_id: string;
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Stopping. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description The charge point operator refused or did not answer, or the station data could not be obtained. */
                424: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/invoices/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Invoices, newest first */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                charging_session_id: string | null;
                                currency: string;
                                /** Format: date-time */
                                date: string;
                                /** Format: uuid */
                                id: string;
                                /**
                                 * Format: uri
                                 * @description Signed link to the PDF, valid for INVOICE_LINK_TTL_SECONDS; needs no bearer token.
                                 */
                                link: string;
                                /** @description Excl. VAT. */
                                net: string;
                                /** @description Sequential per issuer, without gaps. */
                                number: string;
                                refund: boolean;
                                /** @description Incl. VAT. */
                                total: string;
                                /** @description VAT. */
                                vat: string;
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/payment-methods/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List payment methods, newest first */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                card?: {
                                    /** @description e.g. visa, mastercard, amex. */
                                    brand: string;
                                    cardholder_name: string | null;
                                    /** @description MM/YY */
                                    expiration_date: string;
                                    last4: string;
                                };
                                /**
                                 * Format: date-time
                                 * @description When the method was attached to the user.
                                 */
                                created_at: string;
                                /** @description Whether this is the user’s default payment method; a user’s first method becomes the default. */
                                default: boolean;
                                /** @description Processor id of the payment method (pm_...). */
                                id: string;
                                paypal?: {
                                    email: string | null;
                                };
                                /** @enum {string} */
                                type: "card" | "paypal" | "apple_pay" | "google_pay";
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/payment-methods/{pm_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a payment method
         * @description Detaches the method at the processor. Refused while it holds funds for an unfinished charging session (409 already_charging) or an unpaid debt is on it (402 payment_error). Deleting the default makes the newest remaining method the default.
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Payment method id issued by the processor (pm_...). */
                    pm_id: string;
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Removed. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Payment required (payment_error, pre_authorization_failed). */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/payment-methods/{pm_id}/default/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make a payment method the default */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Payment method id issued by the processor (pm_...). */
                    pm_id: string;
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            /** @description No body (an empty JSON object is accepted). */
            requestBody: {
                content: {
                    "application/json": unknown;
                };
            };
            responses: {
                /** @description It is now the default. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{user_id}/setup-intents/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Create a setup intent to connect a payment method
         * @description Answers a new setup intent of the payment processor for the user. Confirm it with the processor’s frontend SDK (Stripe.js, Stripe’s mobile SDKs) and `client_secret`; while the built-in sandbox is the processor (`processor: stripe_sandbox`), confirm it through `POST /sandbox/setup_intents/<id>/confirm` instead. When it succeeds the method is attached to the user; the user’s first method becomes the default.
         */
        get: {
            parameters: {
                query?: {
                    /** @description card (also Apple Pay and Google Pay wallets) or paypal. */
                    pm_type?: "card" | "paypal";
                };
                header?: never;
                path: {
                    /** @description User id (UUID). */
                    user_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        /**
                         * @example {
                         *       "id": "seti_aVMxdFx28h2Ick6W5E9Snid8",
                         *       "client_secret": "seti_aVMxdFx28h2Ick6W5E9Snid8_secret_9oFAr9WiX5SiJHDE5BfR9XED",
                         *       "setup_intent_client_secret": "seti_aVMxdFx28h2Ick6W5E9Snid8_secret_9oFAr9WiX5SiJHDE5BfR9XED",
                         *       "status": "requires_payment_method",
                         *       "pm_type": "card",
                         *       "processor": "stripe_sandbox",
                         *       "publishable_key": "pk_test_sandbox5Y1SWvfKGAKzBmb6QL6fN5fpMUlNholu"
                         *     }
                         */
                        "application/json": {
                            /** @description Confirm the setup intent with it through the processor’s SDK (or /sandbox/... while the sandbox is active). */
                            client_secret: string;
                            /** @description The processor’s setup intent id (seti_...). */
                            id: string;
                            /** @enum {string} */
                            pm_type: "card" | "paypal";
                            /**
                             * @description stripe: confirm with Stripe.js or Stripe’s mobile SDKs and publishable_key; stripe_sandbox: the built-in sandbox, confirm through /sandbox/setup_intents/<id>/confirm.
                             * @enum {string}
                             */
                            processor: "stripe" | "stripe_sandbox";
                            /** @description The processor’s publishable key for its frontend SDK. */
                            publishable_key: string;
                            /** @description Same value as client_secret (the reference API name). */
                            setup_intent_client_secret: string;
                            /** @description The setup intent’s status, requires_payment_method when new. */
                            status: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Temporarily unavailable (the database, the payment processor, start-up); retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhook-endpoints/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List webhook endpoints, oldest first */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                /** Format: date-time */
                                created_at: string;
                                description: string | null;
                                /** Format: date-time */
                                disabled_at: string | null;
                                /** @description Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API. */
                                disabled_reason: string | null;
                                /** @description Whether events are delivered to it. */
                                enabled: boolean;
                                events: string[];
                                /**
                                 * Format: date-time
                                 * @description First failed attempt since the last successful one; the endpoint is disabled 3 days after it.
                                 */
                                failing_since: string | null;
                                /** Format: uuid */
                                id: string;
                                /**
                                 * Format: date-time
                                 * @description After a rotation: until when the previous secret signs too (a second v1 signature).
                                 */
                                previous_secret_expires_at: string | null;
                                /** Format: date-time */
                                updated_at: string;
                                url: string;
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Create a webhook endpoint
         * @description Events of the chosen types are POSTed to the URL, signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature) with the `secret` answered here, and only here: keep it. Failed deliveries are retried for 3 days (5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h); a 410 Gone answer, or 3 days of failures, disables the endpoint.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Your own note on the endpoint. */
                        description?: string | null;
                        /** @description Event types to receive (charging_session.pending, charging_session.active, charging_session.stopping, charging_session.completed, charging_session.failed, charging_session.progress, invoice.created, payment_method.attached, payment_method.detached, debt.created, debt.paid, user.deleted, ping), or ["*"] for all of them, including types added later. */
                        events: string[];
                        /** @description Where events are POSTed. https only (plain http only to localhost, 127.0.0.0/8 or [::1], and not in production); no credentials (user:password@). In production the host must be public: private, loopback, link-local, unique-local, CGNAT and unspecified addresses are refused, both as literals and as what the host name resolves to at delivery time. */
                        url: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            description: string | null;
                            /** Format: date-time */
                            disabled_at: string | null;
                            /** @description Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API. */
                            disabled_reason: string | null;
                            /** @description Whether events are delivered to it. */
                            enabled: boolean;
                            events: string[];
                            /**
                             * Format: date-time
                             * @description First failed attempt since the last successful one; the endpoint is disabled 3 days after it.
                             */
                            failing_since: string | null;
                            /** Format: uuid */
                            id: string;
                            /**
                             * Format: date-time
                             * @description After a rotation: until when the previous secret signs too (a second v1 signature).
                             */
                            previous_secret_expires_at: string | null;
                            /** @description The signing secret, whsec_<base64>: shown only here (on creation and rotation). Give it to a Standard Webhooks library to verify deliveries. */
                            secret: string;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhook-endpoints/{endpoint_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a webhook endpoint */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            description: string | null;
                            /** Format: date-time */
                            disabled_at: string | null;
                            /** @description Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API. */
                            disabled_reason: string | null;
                            /** @description Whether events are delivered to it. */
                            enabled: boolean;
                            events: string[];
                            /**
                             * Format: date-time
                             * @description First failed attempt since the last successful one; the endpoint is disabled 3 days after it.
                             */
                            failing_since: string | null;
                            /** Format: uuid */
                            id: string;
                            /**
                             * Format: date-time
                             * @description After a rotation: until when the previous secret signs too (a second v1 signature).
                             */
                            previous_secret_expires_at: string | null;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                        };
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint
         * @description Nothing more is delivered to it; its delivery log goes with it.
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Update a webhook endpoint
         * @description Only the fields sent change. `enabled: false` pauses deliveries (they wait); `enabled: true` re-enables an endpoint (also one the service disabled) and clears its failure state.
         */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Your own note on the endpoint. */
                        description?: string | null;
                        /** @description false pauses deliveries (pending ones wait and resume when enabled again; events meanwhile are not queued for it); true re-enables an endpoint, also one the service disabled, and clears its failure state. */
                        enabled?: boolean;
                        /** @description Event types to receive (charging_session.pending, charging_session.active, charging_session.stopping, charging_session.completed, charging_session.failed, charging_session.progress, invoice.created, payment_method.attached, payment_method.detached, debt.created, debt.paid, user.deleted, ping), or ["*"] for all of them, including types added later. */
                        events?: string[];
                        /** @description Where events are POSTed. https only (plain http only to localhost, 127.0.0.0/8 or [::1], and not in production); no credentials (user:password@). In production the host must be public: private, loopback, link-local, unique-local, CGNAT and unspecified addresses are refused, both as literals and as what the host name resolves to at delivery time. */
                        url?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            description: string | null;
                            /** Format: date-time */
                            disabled_at: string | null;
                            /** @description Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API. */
                            disabled_reason: string | null;
                            /** @description Whether events are delivered to it. */
                            enabled: boolean;
                            events: string[];
                            /**
                             * Format: date-time
                             * @description First failed attempt since the last successful one; the endpoint is disabled 3 days after it.
                             */
                            failing_since: string | null;
                            /** Format: uuid */
                            id: string;
                            /**
                             * Format: date-time
                             * @description After a rotation: until when the previous secret signs too (a second v1 signature).
                             */
                            previous_secret_expires_at: string | null;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/api/v1/webhook-endpoints/{endpoint_id}/deliveries/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the deliveries to an endpoint, newest first
         * @description Each event delivered (or to be delivered) to the endpoint, with every attempt: its status code or error, and when.
         */
        get: {
            parameters: {
                query?: {
                    /** @description Page number, 1-based. */
                    page?: number;
                    /** @description Results per page (max 100). */
                    page_size?: number;
                };
                header?: never;
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Number of results across all pages. */
                            count: number;
                            next: string | null;
                            previous: string | null;
                            results: {
                                /** @description Every attempt, oldest first. */
                                attempt_log: {
                                    /** @description 1 for the first attempt. */
                                    attempt: number;
                                    duration_ms: number | null;
                                    /** @description Why the attempt failed when the endpoint did not answer (timeout, connection refused, ...). */
                                    error: string | null;
                                    /**
                                     * Format: date-time
                                     * @description null while the attempt is in flight.
                                     */
                                    finished_at: string | null;
                                    /** Format: date-time */
                                    started_at: string;
                                    /** @description The HTTP status the endpoint answered; null when it did not answer. */
                                    status_code: number | null;
                                }[];
                                /** @description Attempts made (or started). */
                                attempts: number;
                                /** Format: date-time */
                                created_at: string;
                                /** Format: date-time */
                                delivered_at: string | null;
                                /**
                                 * Format: uuid
                                 * @description The event delivered: the webhook-id header, the same on every attempt.
                                 */
                                event_id: string;
                                event_type: string;
                                /** Format: uuid */
                                id: string;
                                /** Format: date-time */
                                last_attempt_at: string | null;
                                last_error: string | null;
                                last_status_code: number | null;
                                /**
                                 * Format: date-time
                                 * @description When the next attempt is due; null when none is.
                                 */
                                next_retry_at: string | null;
                                /**
                                 * @description pending: an attempt is due or in flight; delivered: a 2xx came back; failed: given up (3 days of failures, 410 Gone, or the endpoint disabled).
                                 * @enum {string}
                                 */
                                status: "pending" | "delivered" | "failed";
                            }[];
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry a delivery now
         * @description Makes the delivery due at once, whether it is pending, delivered or given up; it is sent again with the same webhook-id. 409 while an attempt is in flight or the endpoint is disabled.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Delivery id (UUID). */
                    delivery_id: string;
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            /** @description No body (an empty JSON object is accepted). */
            requestBody: {
                content: {
                    "application/json": unknown;
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Every attempt, oldest first. */
                            attempt_log: {
                                /** @description 1 for the first attempt. */
                                attempt: number;
                                duration_ms: number | null;
                                /** @description Why the attempt failed when the endpoint did not answer (timeout, connection refused, ...). */
                                error: string | null;
                                /**
                                 * Format: date-time
                                 * @description null while the attempt is in flight.
                                 */
                                finished_at: string | null;
                                /** Format: date-time */
                                started_at: string;
                                /** @description The HTTP status the endpoint answered; null when it did not answer. */
                                status_code: number | null;
                            }[];
                            /** @description Attempts made (or started). */
                            attempts: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            delivered_at: string | null;
                            /**
                             * Format: uuid
                             * @description The event delivered: the webhook-id header, the same on every attempt.
                             */
                            event_id: string;
                            event_type: string;
                            /** Format: uuid */
                            id: string;
                            /** Format: date-time */
                            last_attempt_at: string | null;
                            last_error: string | null;
                            last_status_code: number | null;
                            /**
                             * Format: date-time
                             * @description When the next attempt is due; null when none is.
                             */
                            next_retry_at: string | null;
                            /**
                             * @description pending: an attempt is due or in flight; delivered: a 2xx came back; failed: given up (3 days of failures, 410 Gone, or the endpoint disabled).
                             * @enum {string}
                             */
                            status: "pending" | "delivered" | "failed";
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhook-endpoints/{endpoint_id}/rotate-secret/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret
         * @description Answers a new secret (shown only here). For 24 hours deliveries carry two signatures, with the new and the previous secret, so receivers can switch without losing a delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            /** @description No body (an empty JSON object is accepted). */
            requestBody: {
                content: {
                    "application/json": unknown;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: date-time */
                            created_at: string;
                            description: string | null;
                            /** Format: date-time */
                            disabled_at: string | null;
                            /** @description Why the service disabled the endpoint (it answered 410 Gone, or every attempt failed for 3 days); null when enabled or disabled through this API. */
                            disabled_reason: string | null;
                            /** @description Whether events are delivered to it. */
                            enabled: boolean;
                            events: string[];
                            /**
                             * Format: date-time
                             * @description First failed attempt since the last successful one; the endpoint is disabled 3 days after it.
                             */
                            failing_since: string | null;
                            /** Format: uuid */
                            id: string;
                            /**
                             * Format: date-time
                             * @description After a rotation: until when the previous secret signs too (a second v1 signature).
                             */
                            previous_secret_expires_at: string | null;
                            /** @description The signing secret, whsec_<base64>: shown only here (on creation and rotation). Give it to a Standard Webhooks library to verify deliveries. */
                            secret: string;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhook-endpoints/{endpoint_id}/test/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Records a `ping` event for this endpoint only and answers at once (202); it is delivered like any other event, and shows in the delivery log.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description Makes the request safe to retry: the first answer is replayed for 24 h. */
                    "idempotency-key"?: string;
                };
                path: {
                    /** @description Webhook endpoint id (UUID). */
                    endpoint_id: string;
                };
                cookie?: never;
            };
            /** @description No body (an empty JSON object is accepted). */
            requestBody: {
                content: {
                    "application/json": unknown;
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /**
                             * Format: uuid
                             * @description The ping event’s id: the webhook-id header of its delivery.
                             */
                            event_id: string;
                        };
                    };
                };
                /** @description Invalid input (validation_error); `errors` names the fields. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Missing, malformed, expired or revoked token, or disabled client (unauthorized). */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Plain HTTP where HTTPS is required (https_required). */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Not found, or owned by another client (not_found). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Conflict with the current state, or the same Idempotency-Key is in flight. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Idempotency-Key reused with a different request (idempotency_conflict). */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
                /** @description Unexpected error; detail holds only a support id. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": components["schemas"]["Problem"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "charging_session.active": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.active event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.active";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "charging_session.completed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.completed event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.completed";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "charging_session.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.failed event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.failed";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "charging_session.pending": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.pending event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.pending";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "charging_session.progress": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.progress event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.progress";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "charging_session.stopping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** charging_session.stopping event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "status": "active",
                             *       "is_active": true,
                             *       "start_time": "2026-03-02T09:15:06.287Z",
                             *       "end_time": null,
                             *       "duration": 58,
                             *       "consumed_energy": "9.683",
                             *       "evse_id": "DE*HHC*ESCN*NORMAL",
                             *       "station_id": "aad2025b-7bdb-af25-fabf-99c597a533ca",
                             *       "station_info": {
                             *         "station_name": "Sandbox scenarios (Helion Highway Charging)",
                             *         "station_address": "Scenario Street 1, Berlin",
                             *         "country": "DEU",
                             *         "station_speed": "fast",
                             *         "connector_standard": "IEC_62196_T2_COMBO",
                             *         "connector_power": 50,
                             *         "support_phone": null,
                             *         "latitude": "52.521000",
                             *         "longitude": "13.406000"
                             *       },
                             *       "is_partner": false,
                             *       "logo_url": null,
                             *       "user_facing_session_prices": {
                             *         "kwh_price": "0.54",
                             *         "time_price": "0.0238",
                             *         "session_fee": "0.60",
                             *         "blocking_fee": null,
                             *         "starting_fee": null,
                             *         "grace_period_minutes": null,
                             *         "blocking_cap": null,
                             *         "currency": "EUR"
                             *       },
                             *       "session_cost": {
                             *         "kwh_cost": null,
                             *         "time_cost": null,
                             *         "session_fee_cost": null,
                             *         "blocking_fee_cost": null,
                             *         "starting_fee_cost": null,
                             *         "invoice_download": null,
                             *         "invoice_vat": "0.00",
                             *         "invoice_summary": "0.00",
                             *         "invoice_credits": "0.00",
                             *         "invoice_discount": "0.00",
                             *         "currency": "EUR"
                             *       },
                             *       "estimated_cost": "5.80",
                             *       "pre_authorization": {
                             *         "amount": "29.00",
                             *         "currency": "EUR",
                             *         "status": "authorized"
                             *       },
                             *       "payment_method_id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "failure_reason": null,
                             *       "rates": null,
                             *       "created_at": "2026-03-02T09:15:05.158Z",
                             *       "updated_at": "2026-03-02T09:16:04.420Z",
                             *       "version": 13
                             *     }
                             */
                            object: {
                                /** @description kWh, 3 decimals. */
                                consumed_energy: string;
                                /** Format: date-time */
                                created_at: string;
                                /** @description Seconds since the start (to the end once ended). */
                                duration: number | null;
                                /** Format: date-time */
                                end_time: string | null;
                                /** @description What the session has cost so far incl. VAT, from the tariff and the charging periods reported. */
                                estimated_cost: string | null;
                                evse_id: string;
                                failure_reason: string | null;
                                /** Format: uuid */
                                id: string;
                                /** @description True while pending, active or stopping. */
                                is_active: boolean;
                                is_partner: boolean;
                                logo_url: string | null;
                                payment_method_id: string;
                                pre_authorization: {
                                    /** @description Amount held on the payment method. */
                                    amount: string;
                                    currency: string;
                                    /** @description Where the hold stands: pending, authorized, requires_action, declined, captured, released, expired, failed; or (ours) transferred: a later session of the user took this failed attempt's hold over (transferred_to), and nothing was captured for this one. */
                                    status: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: the failed attempt (it waited for the customer's authentication) whose hold this session took over.
                                     */
                                    transferred_from?: string;
                                    /**
                                     * Format: uuid
                                     * @description Ours: with status transferred, the session that took this hold over; what it captured is on that session.
                                     */
                                    transferred_to?: string;
                                };
                                rates: number | null;
                                session_cost: {
                                    /** @description Parking (blocking) part, incl. VAT. */
                                    blocking_fee_cost: string | null;
                                    currency: string;
                                    /** @description Credits applied (always 0.00: there are no credits yet). */
                                    invoice_credits: string;
                                    /** @description Discount applied (always 0.00: there are no discounts yet). */
                                    invoice_discount: string;
                                    /**
                                     * Format: uri
                                     * @description Signed, expiring link to the invoice PDF (no bearer token needed).
                                     */
                                    invoice_download: string | null;
                                    /** @description Total of the invoice incl. VAT ("0.00" until the session is billed). */
                                    invoice_summary: string;
                                    /** @description VAT of the invoice. */
                                    invoice_vat: string;
                                    /** @description Energy part of the cost, incl. VAT. */
                                    kwh_cost: string | null;
                                    /** @description The operator’s session fee (and any minimum/maximum price adjustment), incl. VAT. */
                                    session_fee_cost: string | null;
                                    /** @description Our starting fee, incl. VAT. */
                                    starting_fee_cost: string | null;
                                    /** @description Charging-time part, incl. VAT. */
                                    time_cost: string | null;
                                };
                                /** Format: date-time */
                                start_time: string | null;
                                station_id: string;
                                station_info: {
                                    /** @description kW */
                                    connector_power: number | null;
                                    connector_standard: string | null;
                                    /** @description ISO 3166-1 alpha-3, as the operator sent it. */
                                    country: string | null;
                                    latitude: string | null;
                                    longitude: string | null;
                                    station_address: string | null;
                                    station_name: string | null;
                                    /** @description slow, fast or turbo */
                                    station_speed: string | null;
                                    support_phone: string | null;
                                };
                                /**
                                 * @description pending: the operator accepted the start, charging has not begun; active; stopping: a stop was accepted (or the car ended the session), the CDR is awaited; completed: the CDR arrived and the cost is final; failed: the start did not succeed (failure_reason).
                                 * @enum {string}
                                 */
                                status: "pending" | "active" | "stopping" | "completed" | "failed";
                                /** Format: date-time */
                                updated_at: string;
                                user_facing_session_prices: {
                                    /** @description Most blocking fees per session. */
                                    blocking_cap: string | null;
                                    /** @description Per minute of parking (blocking) incl. VAT. */
                                    blocking_fee: string | null;
                                    currency: string;
                                    grace_period_minutes: number | null;
                                    /** @description Per kWh incl. VAT at the start. */
                                    kwh_price: string | null;
                                    /** @description One-off fee of the operator incl. VAT. */
                                    session_fee: string | null;
                                    /** @description Our one-off fee incl. VAT. */
                                    starting_fee: string | null;
                                    /** @description Per minute of charging incl. VAT at the start. */
                                    time_price: string | null;
                                };
                                /** @description Ours, beyond the reference: 1 when the session is created, one more at every change of it. Client events (webhooks, the live stream) carry the session with its version: one with a lower version than a session already seen is stale and may be discarded. */
                                version: number;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "charging_session.stopping";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "debt.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** debt.created event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            object: {
                                /** @description Amount owed. */
                                amount: string;
                                currency: string;
                                /** @description Confirm the payment with the processor’s SDK; paying clears the debt. */
                                payment_intent_client_secret: string;
                                /** Format: uuid */
                                session_id: string;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "debt.created";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "debt.paid": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** debt.paid event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            object: {
                                /** @description Amount owed. */
                                amount: string;
                                currency: string;
                                /** @description Confirm the payment with the processor’s SDK; paying clears the debt. */
                                payment_intent_client_secret: string;
                                /** Format: uuid */
                                session_id: string;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "debt.paid";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "invoice.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** invoice.created event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "ddb15005-b912-4c0c-9c7f-405359a803a0",
                             *       "number": "CA-000001",
                             *       "link": "https://localhost:8443/invoices/ddb15005-b912-4c0c-9c7f-405359a803a0/pdf?expires=1772446566&signature=KJxfWaGXxtOoVovE-eij6RMGMpm3Kn_Plefn5MWTaRw",
                             *       "total": "7.37",
                             *       "net": "6.20",
                             *       "vat": "1.17",
                             *       "date": "2026-03-02T09:17:12.031Z",
                             *       "refund": false,
                             *       "charging_session_id": "cc79d392-c8a5-4528-b7db-88a61859ca08",
                             *       "currency": "EUR"
                             *     }
                             */
                            object: {
                                charging_session_id: string | null;
                                currency: string;
                                /** Format: date-time */
                                date: string;
                                /** Format: uuid */
                                id: string;
                                /**
                                 * Format: uri
                                 * @description Signed link to the PDF, valid for INVOICE_LINK_TTL_SECONDS; needs no bearer token.
                                 */
                                link: string;
                                /** @description Excl. VAT. */
                                net: string;
                                /** @description Sequential per issuer, without gaps. */
                                number: string;
                                refund: boolean;
                                /** @description Incl. VAT. */
                                total: string;
                                /** @description VAT. */
                                vat: string;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "invoice.created";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "payment_method.attached": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** payment_method.attached event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "type": "card",
                             *       "default": true,
                             *       "created_at": "2026-03-02T09:14:51.000Z",
                             *       "card": {
                             *         "brand": "visa",
                             *         "last4": "4242",
                             *         "expiration_date": "12/29",
                             *         "cardholder_name": null
                             *       }
                             *     }
                             */
                            object: {
                                card?: {
                                    /** @description e.g. visa, mastercard, amex. */
                                    brand: string;
                                    cardholder_name: string | null;
                                    /** @description MM/YY */
                                    expiration_date: string;
                                    last4: string;
                                };
                                /**
                                 * Format: date-time
                                 * @description When the method was attached to the user.
                                 */
                                created_at: string;
                                /** @description Whether this is the user’s default payment method; a user’s first method becomes the default. */
                                default: boolean;
                                /** @description Processor id of the payment method (pm_...). */
                                id: string;
                                paypal?: {
                                    email: string | null;
                                };
                                /** @enum {string} */
                                type: "card" | "paypal" | "apple_pay" | "google_pay";
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "payment_method.attached";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "payment_method.detached": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** payment_method.detached event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            /**
                             * @example {
                             *       "id": "pm_qiTunlkfDvcEU7kKyVKMuiHC",
                             *       "type": "card",
                             *       "default": true,
                             *       "created_at": "2026-03-02T09:14:51.000Z",
                             *       "card": {
                             *         "brand": "visa",
                             *         "last4": "4242",
                             *         "expiration_date": "12/29",
                             *         "cardholder_name": null
                             *       }
                             *     }
                             */
                            object: {
                                card?: {
                                    /** @description e.g. visa, mastercard, amex. */
                                    brand: string;
                                    cardholder_name: string | null;
                                    /** @description MM/YY */
                                    expiration_date: string;
                                    last4: string;
                                };
                                /**
                                 * Format: date-time
                                 * @description When the method was attached to the user.
                                 */
                                created_at: string;
                                /** @description Whether this is the user’s default payment method; a user’s first method becomes the default. */
                                default: boolean;
                                /** @description Processor id of the payment method (pm_...). */
                                id: string;
                                paypal?: {
                                    email: string | null;
                                };
                                /** @enum {string} */
                                type: "card" | "paypal" | "apple_pay" | "google_pay";
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "payment_method.detached";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    ping: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** ping event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            object: {
                                /** Format: uuid */
                                endpoint_id: string;
                                message: string;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "ping";
                        user_id: null;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "user.deleted": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** user.deleted event */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description The event id (the same on every attempt). */
                    "webhook-id": string;
                    /** @description Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the bytes of the endpoint secret (whsec_<base64>); two after a rotation, for 24 hours. */
                    "webhook-signature": string;
                    /** @description Unix seconds of the attempt. */
                    "webhook-timestamp": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        data: {
                            object: {
                                /** Format: date-time */
                                deleted_at: string;
                                /** @description The user’s custom_properties.external_id, when it had one. */
                                external_id?: string;
                                /** Format: uuid */
                                id: string;
                            };
                        };
                        /**
                         * Format: uuid
                         * @description The event id: the webhook-id header, the same on every retry (deduplicate on it).
                         */
                        id: string;
                        /** @constant */
                        type: "user.deleted";
                        /**
                         * Format: uuid
                         * @description The user the event is about.
                         */
                        user_id: string;
                    };
                };
            };
            responses: {
                /** @description Any 2xx within WEBHOOK_TIMEOUT_MS: delivered. Anything else is retried with backoff. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description RFC 9457 problem details, also carrying the reference API error envelope (detail, error.type, error.details). */
        Problem: {
            /** @description Human-readable explanation. For 500 it holds only a support id. */
            detail: string;
            error: {
                details: string;
                payment_intent_client_secret?: string;
                /**
                 * @description Machine-readable error code; clients switch on this.
                 * @enum {string}
                 */
                type: "validation_error" | "payment_method_error" | "unauthorized" | "payment_error" | "pre_authorization_failed" | "https_required" | "not_found" | "conflict" | "already_charging" | "already_stopped" | "billing_data_required" | "station_availability_issue" | "payload_too_large" | "unsupported_media_type" | "idempotency_conflict" | "temporary_locked" | "charging_provider_error" | "rate_limited" | "unexpected_error" | "service_unavailable" | "payment_processor_unavailable";
            };
            /** @description One entry per invalid field. */
            errors?: {
                field: string;
                message: string;
            }[];
            request_id: string;
            status: number;
            title: string;
            /**
             * Format: uri
             * @description URI of the problem type; GET it for a description.
             */
            type: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
