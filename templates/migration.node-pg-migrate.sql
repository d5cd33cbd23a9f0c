-- {{title}}
-- Rendered by `blocks migrate` from the block's schema module.

-- Up Migration
{{up}}

-- Down Migration
{{down}}
