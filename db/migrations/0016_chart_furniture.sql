-- The chart's equipment account names furniture too: the local model put "Desk chairs" under
-- 7900 Other expenses, as no account's keywords named a chair or a desk.
UPDATE "account"
   SET "keywords" = "keywords" || '{furniture,chair,chairs,desk,desks,cabinet,cabinets}'::text[]
 WHERE "code" = '6200' AND NOT ("keywords" @> '{furniture}'::text[]);
--> statement-breakpoint
UPDATE "account" SET "name" = 'Hardware, equipment and furniture' WHERE "code" = '6200' AND "name" = 'Hardware and equipment';
