-- The predefined service categories, per organization type (names in French and English).
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_retail_checkout', 'retail', 'Caisse', 'Checkout');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_retail_returns', 'retail', 'Retours et échanges', 'Returns and exchanges');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_retail_pickup', 'retail', 'Retrait de commande', 'Order pickup');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_retail_advice', 'retail', 'Conseil en magasin', 'In-store advice');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_health_consultation', 'healthcare', 'Consultation', 'Consultation');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_health_lab', 'healthcare', 'Prélèvements', 'Lab tests');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_health_pharmacy', 'healthcare', 'Pharmacie', 'Pharmacy');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_health_emergency', 'healthcare', 'Urgences', 'Emergency');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_health_vaccination', 'healthcare', 'Vaccination', 'Vaccination');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_bank_teller', 'banking', 'Guichet', 'Teller');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_bank_advisor', 'banking', 'Conseiller', 'Advisor');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_bank_loans', 'banking', 'Crédits', 'Loans');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_bank_accounts', 'banking', 'Ouverture de compte', 'Account opening');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_gov_id', 'government', 'Carte d''identité et passeport', 'ID card and passport');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_gov_civil', 'government', 'État civil', 'Civil registry');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_gov_permits', 'government', 'Permis et autorisations', 'Permits and licences');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_gov_taxes', 'government', 'Impôts', 'Taxes');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_other_reception', 'other', 'Accueil', 'Reception');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_other_general', 'other', 'Service général', 'General service');--> statement-breakpoint
INSERT INTO service_types (id, organization_type, name_fr, name_en) VALUES ('st_other_appointment', 'other', 'Rendez-vous', 'Appointment');
