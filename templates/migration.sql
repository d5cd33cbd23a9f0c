-- {{title}}
-- Rendered by `blocks migrate` from the block's schema module.
-- Every statement is IF NOT EXISTS, so running this file again changes nothing.
{{up}}
