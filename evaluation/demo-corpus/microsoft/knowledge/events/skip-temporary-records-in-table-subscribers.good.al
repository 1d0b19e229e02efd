codeunit 50154 "Item Change Log Good"
{
    [EventSubscriber(ObjectType::Table, Database::Item, 'OnAfterModifyEvent', '', false, false)]
    local procedure LogItemChange(var Rec: Record Item; var xRec: Record Item; RunTrigger: Boolean)
    var
        ItemChangeEntry: Record "Item Change Entry";
    begin
        if Rec.IsTemporary() then
            exit;
        ItemChangeEntry.Init();
        ItemChangeEntry."Item No." := Rec."No.";
        ItemChangeEntry."Changed At" := CurrentDateTime();
        ItemChangeEntry.Insert(true);
    end;
}
